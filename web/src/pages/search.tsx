import {
  MEMORY_TYPES,
  RETRIEVAL_PROFILES,
  SEARCH_MODES,
  type MemoryType,
  type RetrievalProfile,
  type SearchMode,
  type SearchResponse,
} from '@mnemo/contract';
import { useState } from 'preact/hooks';
import { api, errorMessage } from '../api.js';
import { ErrorNote, Field, Page } from '../ui.js';

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

  const run = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
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
        <Field label="Owner id">
          <input
            name="owner_id"
            value={ownerId}
            onInput={(e) => setOwnerId((e.target as HTMLInputElement).value)}
          />
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
          <p class="muted">
            {result.total} {result.total === 1 ? 'result' : 'results'}
          </p>
          <ol class="results">
            {result.results.map((item) => (
              <li key={item.chunk_id} class="card result">
                <div class="result-head">
                  <span class="score" title="Final score">
                    {item.score.toFixed(3)}
                  </span>
                  <code class="muted">
                    memory {item.memory_id.slice(0, 8)} · chunk {item.chunk_index}
                  </code>
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
