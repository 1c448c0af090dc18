import {
  MEMORY_TYPES,
  type Memory,
  type MemoryBreakdownResponse,
  type MemoryLink,
  type MemoryType,
  type OwnerType,
} from '@mnemo/contract';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, errorMessage } from '../api.js';
import { Empty, ErrorNote, Field, formatCount, formatTime, Loading, Page } from '../ui.js';
import { OwnerDataActions } from './owner-data.js';

const PAGE_SIZE = 20;

/** An owner as the picker holds it: `type:id`, or '' for every owner. */
const ownerKey = (type: string, id: string) => `${type}:${id}`;
function parseOwnerKey(key: string): { owner_type: OwnerType; owner_id: string } | undefined {
  const colon = key.indexOf(':');
  if (colon < 0) return undefined;
  return { owner_type: key.slice(0, colon) as OwnerType, owner_id: key.slice(colon + 1) };
}

interface Filters {
  memory_type: string;
  start_time: string;
  end_time: string;
}
const NO_FILTERS: Filters = { memory_type: '', start_time: '', end_time: '' };

const open = (id: string) => {
  window.location.hash = `#/memories/${id}`;
};

function MemoryRef({ id }: { id: string | null }) {
  if (!id) return <>—</>;
  return (
    <a href={`#/memories/${id}`} class="mono">
      {id.slice(0, 8)}
    </a>
  );
}

/** The owner's memory form: a new memory, or a new version that supersedes `replaces`. */
function MemoryForm({
  owner,
  replaces,
  onSaved,
  onCancel,
}: {
  owner: { owner_type: OwnerType; owner_id: string } | undefined;
  replaces?: Memory;
  onSaved: (id: string) => void;
  onCancel: () => void;
}) {
  const [text, setText] = useState(replaces?.text ?? '');
  const [ownerId, setOwnerId] = useState(replaces?.owner_id ?? owner?.owner_id ?? '');
  const [memoryType, setMemoryType] = useState<string>(replaces?.memory_type ?? '');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const save = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const ownerType =
      replaces?.owner_type ?? (ownerId.trim() === owner?.owner_id ? owner?.owner_type : undefined);
    const res = await api.memories.createMemory({
      body: {
        text: text.trim(),
        ...(ownerId.trim() ? { owner_id: ownerId.trim() } : {}),
        ...(ownerType ? { owner_type: ownerType } : {}),
        ...(memoryType ? { memory_type: memoryType as MemoryType } : {}),
        ...(replaces ? { replaces_memory_id: replaces.id } : {}),
      },
      headers: {},
    });
    setBusy(false);
    if (res.status !== 200) return setError(errorMessage(res));
    onSaved(res.body.memory_id);
  };
  const title = replaces ? 'Edit memory' : 'Add a memory';
  return (
    <form class="card memory-form" onSubmit={save} aria-label={title}>
      <h2>{title}</h2>
      {replaces ? (
        <p class="muted small">
          Saving stores the new text as a new memory that supersedes this one: the old version stays
          in the history as “replaced”.
        </p>
      ) : null}
      <Field label="Text">
        <textarea
          name="text"
          rows={3}
          required
          value={text}
          onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        />
      </Field>
      <div class="form-row">
        <Field label="Owner id" hint={replaces ? undefined : 'Empty: the default owner'}>
          <input
            name="new_owner_id"
            value={ownerId}
            disabled={replaces !== undefined}
            onInput={(e) => setOwnerId((e.target as HTMLInputElement).value)}
          />
        </Field>
        <Field label="Type">
          <select
            name="new_memory_type"
            value={memoryType}
            onChange={(e) => setMemoryType((e.target as HTMLSelectElement).value)}
          >
            <option value="">Automatic</option>
            {MEMORY_TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </Field>
      </div>
      <ErrorNote message={error} />
      <div class="actions">
        <button type="submit" disabled={busy || text.trim() === ''}>
          {busy ? 'Saving…' : replaces ? 'Save new version' : 'Add memory'}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function MemoryDetail({
  id,
  onClose,
  onChanged,
}: {
  id: string;
  onClose: () => void;
  onChanged: () => void;
}) {
  const [memory, setMemory] = useState<Memory | null>(null);
  const [children, setChildren] = useState<Memory[]>([]);
  const [links, setLinks] = useState<MemoryLink[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState(false);

  const load = async () => {
    setError(null);
    setMemory(null);
    const res = await api.memories.getMemory({ params: { id } });
    if (res.status !== 200) {
      return setError(
        res.status === 404
          ? 'This memory does not exist (it may have been deleted).'
          : errorMessage(res),
      );
    }
    setMemory(res.body);
    const [kids, edges] = await Promise.all([
      api.memories.listMemories({
        query: {
          owner_id: res.body.owner_id,
          owner_type: res.body.owner_type,
          parent_memory_id: id,
          page_size: 50,
        },
      }),
      api.links.listLinks({ params: { id } }),
    ]);
    setChildren(kids.status === 200 ? kids.body.results : []);
    setLinks(edges.status === 200 ? edges.body.results : []);
  };
  useEffect(() => {
    setEditing(false);
    void load();
  }, [id]);

  const remove = async () => {
    if (!memory) return;
    const note = children.length
      ? ` Its ${children.length} extracted ${children.length === 1 ? 'memory goes' : 'memories go'} with it.`
      : '';
    if (!window.confirm(`Delete this memory for good?${note}`)) return;
    const res = await api.memories.deleteMemory({ params: { id: memory.id } });
    if (res.status !== 200) return setError(errorMessage(res));
    onChanged();
    onClose();
  };

  if (error) {
    return (
      <article class="card detail">
        <ErrorNote message={error} />
        <button type="button" class="secondary" onClick={onClose}>
          Close
        </button>
      </article>
    );
  }
  if (!memory) return <Loading what="the memory" />;
  if (editing) {
    return (
      <MemoryForm
        owner={undefined}
        replaces={memory}
        onCancel={() => setEditing(false)}
        onSaved={(newId) => {
          onChanged();
          open(newId);
        }}
      />
    );
  }
  return (
    <article class="card detail" aria-labelledby="memory-detail-title">
      <header class="detail-head">
        <h2 id="memory-detail-title">Memory {memory.id.slice(0, 8)}</h2>
        <div class="actions">
          {memory.lifecycle_state === 'active' ? (
            <button type="button" class="secondary" onClick={() => setEditing(true)}>
              Edit
            </button>
          ) : null}
          <button type="button" class="danger" onClick={() => void remove()}>
            Delete
          </button>
          <button type="button" class="secondary" onClick={onClose} aria-label="Close details">
            Close
          </button>
        </div>
      </header>
      <p class="memory-text">{memory.text}</p>
      <dl class="facts">
        <dt>Owner</dt>
        <dd>
          {memory.owner_type} {memory.owner_id}
        </dd>
        <dt>Type</dt>
        <dd>{memory.memory_type}</dd>
        <dt>State</dt>
        <dd>
          <span class={`badge ${memory.lifecycle_state}`}>{memory.lifecycle_state}</span>
        </dd>
        <dt>Chunks</dt>
        <dd>{memory.chunks}</dd>
        <dt>Importance</dt>
        <dd>{memory.importance}</dd>
        <dt>Replaced by</dt>
        <dd>
          <MemoryRef id={memory.replaced_by_memory_id} />
        </dd>
        <dt>Extracted from</dt>
        <dd>
          <MemoryRef id={memory.parent_memory_id} />
        </dd>
        <dt>Created</dt>
        <dd>{formatTime(memory.created_at)}</dd>
        <dt>Expires</dt>
        <dd>{formatTime(memory.expires_at)}</dd>
      </dl>
      <h3>Extracted memories</h3>
      {children.length === 0 ? (
        <p class="muted small">None: no facts were extracted from this memory.</p>
      ) : (
        <ul class="children" data-testid="children">
          {children.map((child) => (
            <li key={child.id}>
              <a href={`#/memories/${child.id}`}>{child.text}</a>{' '}
              <span class={`badge ${child.lifecycle_state}`}>{child.lifecycle_state}</span>
            </li>
          ))}
        </ul>
      )}
      <h3>Links</h3>
      {links.length === 0 ? (
        <p class="muted small">No links to or from this memory.</p>
      ) : (
        <ul class="links" data-testid="links">
          {links.map((link) => {
            const outgoing = link.source_id === memory.id;
            const other = outgoing ? link.target_id : link.source_id;
            return (
              <li key={link.id}>
                {outgoing ? 'this' : <MemoryRef id={other} />} <em>{link.relation}</em>{' '}
                {outgoing ? <MemoryRef id={other} /> : 'this'}
              </li>
            );
          })}
        </ul>
      )}
      {memory.claims.length > 0 ? (
        <>
          <h3>Claims</h3>
          <ul>
            {memory.claims.map((claim, i) => (
              <li key={i}>
                {claim.subject} · {claim.attribute} = {claim.value}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      <h3>Lifecycle history</h3>
      {memory.lifecycle_events.length === 0 ? (
        <p class="muted small">No lifecycle events: the memory is as written.</p>
      ) : (
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Event</th>
                <th scope="col">Why (rule)</th>
                <th scope="col">Related memory</th>
              </tr>
            </thead>
            <tbody>
              {memory.lifecycle_events.map((event, i) => (
                <tr key={i}>
                  <td>{formatTime(event.at)}</td>
                  <td>{event.event}</td>
                  <td>
                    {event.rule}
                    {Object.keys(event.details).length > 0 ? (
                      <code class="muted details">{JSON.stringify(event.details)}</code>
                    ) : null}
                  </td>
                  <td>
                    <MemoryRef id={event.related_memory_id ?? null} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </article>
  );
}

export function Memories({ openId, owner }: { openId?: string; owner?: string }) {
  const [owners, setOwners] = useState<MemoryBreakdownResponse | null>(null);
  const [picked, setPicked] = useState<string>('');
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [applied, setApplied] = useState<Filters>(NO_FILTERS);
  const [page, setPage] = useState(1);
  const [rows, setRows] = useState<Memory[] | null>(null);
  const [total, setTotal] = useState(0);
  const [hasMore, setHasMore] = useState(false);
  const [adding, setAdding] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [version, setVersion] = useState(0);

  const loadOwners = async () => {
    const res = await api.usage.getMemoryBreakdown();
    if (res.status !== 200) return;
    setOwners(res.body);
    // A link from the usage page names the owner by id.
    if (owner) {
      const match = res.body.by_owner.find((o) => o.owner_id === owner);
      setPicked(ownerKey(match?.owner_type ?? 'user', owner));
    }
  };
  useEffect(() => void loadOwners(), [owner, version]);

  // Only the newest listing is shown: an older answer arriving late must not overwrite it.
  const latest = useRef(0);
  const load = async () => {
    const ticket = ++latest.current;
    setError(null);
    const query: Record<string, string | number> = { page, page_size: PAGE_SIZE };
    const who = parseOwnerKey(picked);
    if (who) Object.assign(query, who);
    // The API lists the default owner when no owner id is given; the console browses them all.
    else query.all_owners = 'true';
    if (applied.memory_type) query.memory_type = applied.memory_type;
    if (applied.start_time) query.start_time = new Date(applied.start_time).toISOString();
    if (applied.end_time) query.end_time = new Date(applied.end_time).toISOString();
    const res = await api.memories.listMemories({ query: query as never });
    if (ticket !== latest.current) return;
    if (res.status !== 200) return setError(errorMessage(res));
    setRows(res.body.results);
    setTotal(res.body.total);
    setHasMore(res.body.has_more);
  };
  useEffect(() => void load(), [picked, applied, page, version]);

  const changed = () => setVersion((v) => v + 1);
  const pickOwner = (key: string) => {
    setPicked(key);
    setPage(1);
  };
  const setFilter = (key: keyof Filters) => (e: Event) =>
    setFilters({ ...filters, [key]: (e.target as HTMLInputElement).value });
  const first = total === 0 ? 0 : (page - 1) * PAGE_SIZE + 1;
  const last = Math.min(page * PAGE_SIZE, total);
  const pickedOwner = parseOwnerKey(picked);
  const listed = owners?.by_owner ?? [];
  const pickedListed = listed.some((o) => ownerKey(o.owner_type, o.owner_id) === picked);

  return (
    <Page
      title="Memories"
      actions={
        <button type="button" onClick={() => setAdding(!adding)} aria-expanded={adding}>
          Add memory
        </button>
      }
    >
      {adding ? (
        <MemoryForm
          owner={pickedOwner}
          onCancel={() => setAdding(false)}
          onSaved={(id) => {
            setAdding(false);
            changed();
            open(id);
          }}
        />
      ) : null}
      <form
        class="card filters"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied(filters);
          setPage(1);
        }}
      >
        <Field label="Owner">
          <select
            name="owner"
            value={picked}
            onChange={(e) => pickOwner((e.target as HTMLSelectElement).value)}
          >
            <option value="">All owners{owners ? ` (${formatCount(owners.owners)})` : ''}</option>
            {picked && !pickedListed && pickedOwner ? (
              <option value={picked}>{pickedOwner.owner_id}</option>
            ) : null}
            {listed.map((o) => (
              <option
                key={ownerKey(o.owner_type, o.owner_id)}
                value={ownerKey(o.owner_type, o.owner_id)}
              >
                {o.owner_id}
                {o.owner_type === 'user' ? '' : ` (${o.owner_type})`} · {formatCount(o.total)}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Memory type">
          <select
            name="memory_type"
            value={filters.memory_type}
            onChange={setFilter('memory_type')}
          >
            <option value="">Any</option>
            {MEMORY_TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </Field>
        <Field label="From">
          <input
            type="datetime-local"
            name="start_time"
            value={filters.start_time}
            onInput={setFilter('start_time')}
          />
        </Field>
        <Field label="To">
          <input
            type="datetime-local"
            name="end_time"
            value={filters.end_time}
            onInput={setFilter('end_time')}
          />
        </Field>
        <div class="actions">
          <button type="submit">Apply filters</button>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setFilters(NO_FILTERS);
              setApplied(NO_FILTERS);
              setPicked('');
              setPage(1);
            }}
          >
            Reset
          </button>
        </div>
      </form>
      {pickedOwner ? (
        <OwnerDataActions
          key={picked}
          ownerId={pickedOwner.owner_id}
          ownerType={pickedOwner.owner_type}
          onErased={() => {
            setPicked('');
            changed();
          }}
        />
      ) : null}
      <ErrorNote message={error} onRetry={() => void load()} />
      <div class={openId ? 'split' : ''}>
        <div>
          {rows === null && !error ? <Loading what="memories" /> : null}
          {rows !== null && rows.length === 0 ? (
            <Empty>
              {picked || applied !== NO_FILTERS
                ? 'No memories match: try another owner or fewer filters.'
                : 'No memories yet. Add one here, or write one from your app (see Connect your app on the Overview).'}
            </Empty>
          ) : null}
          {rows !== null && rows.length > 0 ? (
            <>
              <ul class="memory-list" aria-label="Memories">
                {rows.map((row) => (
                  <li key={row.id} class={row.id === openId ? 'selected' : ''}>
                    <a href={`#/memories/${row.id}`} class="memory-link">
                      {row.text.length > 140 ? `${row.text.slice(0, 140)}…` : row.text}
                    </a>
                    <div class="memory-meta">
                      <span class={`badge ${row.lifecycle_state}`}>{row.lifecycle_state}</span>
                      <span>{row.owner_id}</span>
                      <span>{row.memory_type}</span>
                      <span>{formatTime(row.created_at)}</span>
                    </div>
                  </li>
                ))}
              </ul>
              <nav class="pager" aria-label="Pages">
                <button
                  type="button"
                  class="secondary"
                  disabled={page === 1}
                  onClick={() => setPage(page - 1)}
                >
                  ← Previous
                </button>
                <span aria-live="polite" data-testid="page-status">
                  {formatCount(first)}–{formatCount(last)} of {formatCount(total)}
                </span>
                <button
                  type="button"
                  class="secondary"
                  disabled={!hasMore}
                  onClick={() => setPage(page + 1)}
                >
                  Next →
                </button>
              </nav>
            </>
          ) : null}
        </div>
        {openId ? (
          <MemoryDetail
            id={openId}
            onChanged={changed}
            onClose={() => {
              window.location.hash = '#/memories';
            }}
          />
        ) : null}
      </div>
    </Page>
  );
}
