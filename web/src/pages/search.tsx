import {
  MEMORY_TYPES,
  RETRIEVAL_PROFILES,
  SEARCH_MODES,
  type MemoryType,
  type RetrievalProfile,
  type SearchMode,
  type SearchResponse,
} from '@mnemo/contract';
import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage } from '../api.js';
import { ErrorNote, Field, formatCount, Page } from '../ui.js';

/** The owner a search without an owner id reads (docs/api-guide.md, Owners). */
const DEFAULT_OWNER = 'default';

export function SearchPlayground() {
  const [query, setQuery] = useState('');
  const [ownerId, setOwnerId] = useState('');
  const [mode, setMode] = useState<SearchMode>('hybrid');
  const [profile, setProfile] = useState<RetrievalProfile>('balanced');
  const [memoryType, setMemoryType] = useState('');
  const [topK, setTopK] = useState(10);
  const [minScore, setMinScore] = useState('');
  const [explain, setExplain] = useState(true);
  const [result, setResult] = useState<SearchResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [searchedOwner, setSearchedOwner] = useState('');
  const [owners, setOwners] = useState<string[]>([]);
  useEffect(() => {
    void api.usage.getMemoryBreakdown().then((res) => {
      if (res.status === 200) setOwners(res.body.by_owner.map((o) => o.owner_id));
    });
  }, []);

  const run = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setSearchedOwner(ownerId.trim());
    const res = await api.search.searchMemories({
      body: {
        query: query.trim(),
        top_k: topK,
        search_mode: mode,
        retrieval_profile: profile,
        explain,
        ...(ownerId.trim() ? { owner_id: ownerId.trim() } : {}),
        ...(minScore !== '' ? { min_score: Number(minScore) } : {}),
        ...(memoryType ? { filters: { memory_type: memoryType as MemoryType } } : {}),
      },
    });
    setBusy(false);
    if (res.status !== 200) return setError(errorMessage(res));
    setError(null);
    setResult(res.body);
  };

  return (
    <Page title="Search playground">
      <form class="card filters" onSubmit={run}>
        <Field label="Query">
          <input
            name="query"
            required
            maxLength={2000}
            value={query}
            onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
          />
        </Field>
        <Field label="Owner id" hint="Empty: the default owner only">
          <input
            name="owner_id"
            list="search-owners"
            value={ownerId}
            onInput={(e) => setOwnerId((e.target as HTMLInputElement).value)}
          />
          <datalist id="search-owners">
            {owners.map((owner) => (
              <option key={owner} value={owner} />
            ))}
          </datalist>
        </Field>
        <Field label="Mode">
          <select
            name="search_mode"
            value={mode}
            onChange={(e) => setMode((e.target as HTMLSelectElement).value as SearchMode)}
          >
            {SEARCH_MODES.map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </Field>
        <Field label="Profile">
          <select
            name="retrieval_profile"
            value={profile}
            onChange={(e) => setProfile((e.target as HTMLSelectElement).value as RetrievalProfile)}
          >
            {RETRIEVAL_PROFILES.map((p) => (
              <option key={p}>{p}</option>
            ))}
          </select>
        </Field>
        <Field label="Memory type">
          <select
            name="memory_type"
            value={memoryType}
            onChange={(e) => setMemoryType((e.target as HTMLSelectElement).value)}
          >
            <option value="">Any</option>
            {MEMORY_TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </Field>
        <Field label="Top k">
          <input
            type="number"
            name="top_k"
            min={1}
            max={20}
            value={topK}
            onInput={(e) => setTopK(Number((e.target as HTMLInputElement).value))}
          />
        </Field>
        <Field label="Min score">
          <input
            type="number"
            name="min_score"
            min={0}
            max={1}
            step={0.01}
            placeholder="profile default"
            value={minScore}
            onInput={(e) => setMinScore((e.target as HTMLInputElement).value)}
          />
        </Field>
        <label class="check">
          <input
            type="checkbox"
            name="explain"
            checked={explain}
            onChange={(e) => setExplain((e.target as HTMLInputElement).checked)}
          />
          Explain scores
        </label>
        <div class="actions">
          <button type="submit" disabled={busy || query.trim() === ''}>
            {busy ? 'Searching…' : 'Search'}
          </button>
        </div>
      </form>
      <ErrorNote message={error} />
      {result ? (
        <div aria-live="polite">
          <p class="muted" data-testid="search-summary">
            {formatCount(result.total)} {result.total === 1 ? 'result' : 'results'} for{' '}
            {searchedOwner ? (
              <>
                owner <strong>{searchedOwner}</strong>
              </>
            ) : (
              <>
                the <strong>default owner</strong> (<code>{DEFAULT_OWNER}</code>)
              </>
            )}
            .
            {!searchedOwner
              ? ' A search reads one owner’s memories: memories your app wrote for a user are found by giving that user’s id.'
              : ''}
          </p>
          {result.total === 0 ? (
            <p class="empty muted">
              Nothing matched. Try other words, the keyword mode, or a lower minimum score
              {searchedOwner ? '' : ', or pick an owner'}.
            </p>
          ) : null}
          <ol class="results">
            {result.results.map((item) => (
              <li key={item.chunk_id} class="card result">
                <div class="result-head">
                  <span class="score" title="Final score">
                    {item.score.toFixed(3)}
                  </span>
                  <a href={`#/memories/${item.memory_id}`} class="mono">
                    memory {item.memory_id.slice(0, 8)}
                  </a>
                  <span class="muted small">chunk {item.chunk_index}</span>
                </div>
                <p>{item.text}</p>
                {item._explain ? (
                  <details>
                    <summary>Why this score</summary>
                    <dl class="facts">
                      <dt>Fusion (RRF)</dt>
                      <dd>{item._explain.rrf_score.toFixed(4)}</dd>
                      <dt>Matched by</dt>
                      <dd>{item._explain.match_sources.join(' + ') || '—'}</dd>
                      <dt>Vector similarity</dt>
                      <dd>{item._explain.vector_score?.toFixed(4) ?? '—'}</dd>
                      <dt>Keyword score</dt>
                      <dd>{item._explain.text_score?.toFixed(4) ?? '—'}</dd>
                    </dl>
                  </details>
                ) : null}
              </li>
            ))}
          </ol>
        </div>
      ) : null}
    </Page>
  );
}
