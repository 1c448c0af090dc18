import type { MemoryBreakdownResponse, OverviewStats, UsageHistoryResponse } from '@mnemo/contract';
import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage } from '../api.js';
import { DailyBars } from '../charts.js';
import { ErrorNote, formatCount, formatTime, Loading, Page } from '../ui.js';
import { ConnectPanel } from './connect.js';
import { MemoryStates, TopOwners } from './usage.js';

export function Overview({ stats: initial }: { stats: OverviewStats }) {
  // The shell loaded these at sign-in; the page shows them as of now.
  const [stats, setStats] = useState<OverviewStats>(initial);
  const [history, setHistory] = useState<UsageHistoryResponse | null>(null);
  const [memories, setMemories] = useState<MemoryBreakdownResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = async () => {
    setError(null);
    const [h, m, o] = await Promise.all([
      api.usage.getUsageHistory({ query: { days: 30 } }),
      api.usage.getMemoryBreakdown(),
      api.dashboard.getOverviewStats(),
    ]);
    if (o.status === 200) setStats(o.body.data);
    if (h.status !== 200) return setError(errorMessage(h));
    if (m.status !== 200) return setError(errorMessage(m));
    setHistory(h.body);
    setMemories(m.body);
  };
  useEffect(() => void load(), []);

  const cards: Array<[string, number]> = [
    ['Memories', stats.memories.total],
    ['Active', stats.memories.active],
    ['Replaced', stats.memories.replaced],
    ['Archived', stats.memories.archived],
    ['Active API keys', stats.api_keys.active],
    ['Requests (24 h)', stats.requests_24h],
  ];
  // Known only once this page's own numbers arrived (the shell's are from sign-in).
  const empty = history !== null && stats.memories.total === 0;
  return (
    <Page title={`Overview · ${stats.workspace.name}`}>
      <p class="lead">
        Plan{' '}
        <span class="badge plan" data-testid="plan">
          {stats.workspace.plan}
        </span>{' '}
        · signed in as <strong>{stats.user.id}</strong> · session until{' '}
        {formatTime(stats.session_expires_at)}
      </p>
      <ul class="stats">
        {cards.map(([label, value]) => (
          <li key={label} class="card">
            <span class="stat-value">{formatCount(value)}</span>
            <span class="stat-label">{label}</span>
          </li>
        ))}
      </ul>
      {empty ? (
        <p class="note ok">
          No memories yet. Connect an app below, or add one on the <a href="#/memories">Memories</a>{' '}
          page.
        </p>
      ) : null}
      <ErrorNote message={error} onRetry={() => void load()} />
      <div class="grid-2">
        <div class="card">
          {history ? (
            <DailyBars
              title="Requests per day"
              days={history.days.map((d) => d.day)}
              series={[
                {
                  label: 'Requests',
                  values: history.days.map((d) => d.requests),
                  color: '#2563eb',
                },
                {
                  label: 'Rate limited',
                  values: history.days.map((d) => d.rate_limited),
                  color: '#dc2626',
                },
              ]}
            />
          ) : error ? null : (
            <Loading what="usage history" />
          )}
          <a href="#/usage">All usage charts →</a>
        </div>
        <div class="card">
          <h2>Memories</h2>
          {memories ? (
            <>
              <MemoryStates breakdown={memories} />
              <TopOwners breakdown={memories} limit={5} />
            </>
          ) : error ? null : (
            <Loading what="memory counts" />
          )}
        </div>
      </div>
      <ConnectPanel />
    </Page>
  );
}
