import { MEMORY_TYPES, OWNER_TYPES, type Memory } from '@mnemo/contract';
import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage } from '../api.js';
import { ErrorNote, Field, formatTime, Page } from '../ui.js';

interface Filters {
  owner_id: string;
  owner_type: string;
  memory_type: string;
  start_time: string;
  end_time: string;
}

const EMPTY: Filters = {
  owner_id: '',
  owner_type: '',
  memory_type: '',
  start_time: '',
  end_time: '',
};

function MemoryDetail({ id, onClose }: { id: string; onClose: () => void }) {
  const [memory, setMemory] = useState<Memory | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    void (async () => {
      const res = await api.memories.getMemory({ params: { id } });
      if (res.status !== 200) return setError(errorMessage(res));
      setMemory(res.body);
    })();
  }, [id]);
  if (error) return <ErrorNote message={error} />;
  if (!memory) return <p class="muted">Loading…</p>;
  return (
    <article class="card detail" aria-labelledby="memory-detail-title">
      <header class="detail-head">
        <h2 id="memory-detail-title">Memory {memory.id.slice(0, 8)}</h2>
        <button type="button" class="secondary" onClick={onClose}>
          Close details
        </button>
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
        <dd>{memory.replaced_by_memory_id ?? '—'}</dd>
        <dt>Parent</dt>
        <dd>{memory.parent_memory_id ?? '—'}</dd>
        <dt>Created</dt>
        <dd>{formatTime(memory.created_at)}</dd>
        <dt>Expires</dt>
        <dd>{formatTime(memory.expires_at)}</dd>
      </dl>
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
        <p class="muted">No lifecycle events: the memory is as written.</p>
      ) : (
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
                <td>{event.related_memory_id?.slice(0, 8) ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </article>
  );
}

export function Memories() {
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [rows, setRows] = useState<Memory[]>([]);
  const [total, setTotal] = useState(0);
  const [selected, setSelected] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = async (current: Filters) => {
    const query: Record<string, string> = {};
    for (const [key, value] of Object.entries(current)) {
      if (value) query[key] = key.endsWith('_time') ? new Date(value).toISOString() : value;
    }
    // The API lists the default owner when no owner id is given; the console browses them all.
    if (!current.owner_id) query.all_owners = 'true';
    const res = await api.memories.listMemories({ query: query as never });
    if (res.status !== 200) return setError(errorMessage(res));
    setError(null);
    setRows(res.body.results);
    setTotal(res.body.total);
  };
  useEffect(() => void load(EMPTY), []);

  const set = (key: keyof Filters) => (e: Event) =>
    setFilters({ ...filters, [key]: (e.target as HTMLInputElement).value });

  return (
    <Page title="Memories">
      <form
        class="card filters"
        onSubmit={(e) => {
          e.preventDefault();
          void load(filters);
        }}
      >
        <Field label="Owner id">
          <input name="owner_id" value={filters.owner_id} onInput={set('owner_id')} />
        </Field>
        <Field label="Owner type">
          <select name="owner_type" value={filters.owner_type} onChange={set('owner_type')}>
            <option value="">Any</option>
            {OWNER_TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </Field>
        <Field label="Memory type">
          <select name="memory_type" value={filters.memory_type} onChange={set('memory_type')}>
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
            onInput={set('start_time')}
          />
        </Field>
        <Field label="To">
          <input
            type="datetime-local"
            name="end_time"
            value={filters.end_time}
            onInput={set('end_time')}
          />
        </Field>
        <div class="actions">
          <button type="submit">Apply filters</button>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setFilters(EMPTY);
              void load(EMPTY);
            }}
          >
            Reset
          </button>
        </div>
      </form>
      <ErrorNote message={error} />
      <p class="muted" aria-live="polite">
        {total} {total === 1 ? 'memory' : 'memories'}
      </p>
      <div class={selected ? 'split' : ''}>
        <table>
          <caption class="sr-only">Memories matching the filters</caption>
          <thead>
            <tr>
              <th scope="col">Text</th>
              <th scope="col">Owner</th>
              <th scope="col">Type</th>
              <th scope="col">State</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.id} class={row.id === selected ? 'selected' : ''}>
                <td>
                  <button type="button" class="link" onClick={() => setSelected(row.id)}>
                    {row.text.length > 90 ? `${row.text.slice(0, 90)}…` : row.text}
                  </button>
                </td>
                <td>{row.owner_id}</td>
                <td>{row.memory_type}</td>
                <td>
                  <span class={`badge ${row.lifecycle_state}`}>{row.lifecycle_state}</span>
                </td>
                <td>{formatTime(row.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {selected ? <MemoryDetail id={selected} onClose={() => setSelected(null)} /> : null}
      </div>
    </Page>
  );
}
