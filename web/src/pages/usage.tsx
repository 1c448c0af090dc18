import type { MemoryBreakdownResponse, UsageHistoryResponse, UsageResponse } from '@mnemo/contract';
import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage } from '../api.js';
import { DailyBars } from '../charts.js';
import { Empty, ErrorNote, formatCount, Loading, Meter, Page } from '../ui.js';

/** The workspace's per-minute window, from the `RateLimit-Policy` and `RateLimit` headers. */
export interface RateWindow {
  limit: number;
  remaining: number | undefined;
  resetSeconds: number | undefined;
}

function rateWindow(headers: Headers): RateWindow | null {
  const policy = /"workspace";q=(\d+)/.exec(headers.get('ratelimit-policy') ?? '');
  if (!policy?.[1]) return null;
  const state = /"workspace";r=(\d+);t=(\d+)/.exec(headers.get('ratelimit') ?? '');
  return {
    limit: Number(policy[1]),
    remaining: state?.[1] !== undefined ? Number(state[1]) : undefined,
    resetSeconds: state?.[2] !== undefined ? Number(state[2]) : undefined,
  };
}

const STATE_COLORS = { active: '#16a34a', replaced: '#d97706', archived: '#6b7280' } as const;

/** One stacked bar of the lifecycle states, with a legend that carries the numbers. */
export function MemoryStates({ breakdown }: { breakdown: MemoryBreakdownResponse }) {
  const states = Object.entries(breakdown.by_state) as Array<[keyof typeof STATE_COLORS, number]>;
  if (breakdown.total === 0) return <Empty>No memories stored yet.</Empty>;
  return (
    <div class="states">
      <div
        class="stacked"
        role="img"
        aria-label={states.map(([state, n]) => `${state} ${formatCount(n)}`).join(', ')}
      >
        {states.map(([state, n]) =>
          n > 0 ? (
            <span
              key={state}
              style={{ width: `${(n / breakdown.total) * 100}%`, background: STATE_COLORS[state] }}
            />
          ) : null,
        )}
      </div>
      <ul class="legend">
        {states.map(([state, n]) => (
          <li key={state}>
            <i style={{ background: STATE_COLORS[state] }} /> {state}{' '}
            <strong>{formatCount(n)}</strong>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The owners holding the most memories, as bars, each linking to its memories. */
export function TopOwners({
  breakdown,
  limit = 10,
}: {
  breakdown: MemoryBreakdownResponse;
  limit?: number;
}) {
  const owners = breakdown.by_owner.slice(0, limit);
  const max = owners[0]?.total ?? 1;
  if (owners.length === 0) return null;
  return (
    <div class="owners">
      <h3>
        Memories per owner{' '}
        <span class="muted">
          ({formatCount(breakdown.owners)} {breakdown.owners === 1 ? 'owner' : 'owners'})
        </span>
      </h3>
      <ul class="owner-bars">
        {owners.map((owner) => (
          <li key={`${owner.owner_type}:${owner.owner_id}`}>
            <a
              href={`#/memories?owner=${encodeURIComponent(owner.owner_id)}`}
              class="owner-name"
              title={`${owner.owner_type} ${owner.owner_id}`}
            >
              {owner.owner_id}
            </a>
            <span class="owner-track">
              <span style={{ width: `${(owner.total / max) * 100}%` }} />
            </span>
            <span class="owner-count">{formatCount(owner.total)}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

export function Usage() {
  const [today, setToday] = useState<UsageResponse | null>(null);
  const [history, setHistory] = useState<UsageHistoryResponse | null>(null);
  const [memories, setMemories] = useState<MemoryBreakdownResponse | null>(null);
  const [rate, setRate] = useState<RateWindow | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = async () => {
    setError(null);
    const [t, h, m] = await Promise.all([
      api.usage.getUsageToday(),
      api.usage.getUsageHistory({ query: { days: 30 } }),
      api.usage.getMemoryBreakdown(),
    ]);
    for (const res of [t, h, m]) if (res.status !== 200) return setError(errorMessage(res));
    if (t.status === 200) setToday(t.body);
    if (h.status === 200) {
      setHistory(h.body);
      setRate(rateWindow(h.headers));
    }
    if (m.status === 200) setMemories(m.body);
  };
  useEffect(() => void load(), []);

  const days = history?.days.map((d) => d.day) ?? [];
  const column = (key: 'requests' | 'rate_limited' | 'writes' | 'reads') =>
    history?.days.map((d) => d[key]) ?? [];
  const limitedTotal = column('rate_limited').reduce((a, b) => a + b, 0);

  return (
    <Page
      title="Usage"
      actions={
        <button type="button" class="secondary" onClick={() => void load()}>
          Refresh
        </button>
      }
    >
      <ErrorNote message={error} onRetry={() => void load()} />
      {!today && !error ? <Loading what="usage" /> : null}
      {today ? (
        <>
          <p class="lead">
            Plan <span class="badge plan">{today.plan}</span> · today (UTC {today.day ?? '—'})
            {today.operational_mode && today.operational_mode !== 'normal'
              ? ` · mode ${today.operational_mode}`
              : ''}
            {today.grace_soft_downgrade ? ' · billing grace: limits lowered' : ''}
          </p>
          {(today.cap_alerts ?? []).map((alert) => (
            <p key={alert.resource} class={`note ${alert.severity}`} role="alert">
              {alert.severity === 'critical' ? 'Almost out' : 'Getting close'}: {alert.resource} is
              at {Math.round(alert.ratio * 100)}% of the plan’s cap ({formatCount(alert.used)} of{' '}
              {formatCount(alert.cap)}).
            </p>
          ))}
          <div class="grid-2">
            <section class="card" aria-labelledby="caps-title">
              <h2 id="caps-title">Today against the plan’s daily caps</h2>
              <Meter label="Writes" value={today.writes} max={today.limits?.writes} />
              <Meter
                label="Reads (searches, context)"
                value={today.reads}
                max={today.limits?.reads}
              />
              <Meter label="Embeddings" value={today.embeds} max={today.limits?.embeds} />
              {today.limits ? (
                (today.cap_alerts ?? []).length === 0 ? (
                  <p class="muted small">Every resource is below 80% of its cap.</p>
                ) : null
              ) : (
                <p class="muted small">Limits are off on this server (MNEMO_LIMITS=off).</p>
              )}
            </section>
            <section class="card" aria-labelledby="rate-title">
              <h2 id="rate-title">Rate limit</h2>
              {rate ? (
                <>
                  <Meter
                    label="Requests this minute (workspace)"
                    value={rate.remaining !== undefined ? rate.limit - rate.remaining : 0}
                    max={rate.limit}
                  />
                  <p class="muted small">
                    {formatCount(rate.limit)} requests per minute per workspace; an API key also has
                    its own per-minute limit. Over it, requests get 429 and a Retry-After.
                  </p>
                </>
              ) : (
                <p class="muted small">No rate limit applies to this workspace on this server.</p>
              )}
              <p>
                <strong>{formatCount(limitedTotal)}</strong> requests refused with 429 in the last
                30 days.
              </p>
            </section>
          </div>
        </>
      ) : null}
      {history ? (
        <div class="grid-3">
          <div class="card">
            <DailyBars
              title="Requests per day"
              days={days}
              series={[
                { label: 'Requests', values: column('requests'), color: '#2563eb' },
                { label: 'Rate limited', values: column('rate_limited'), color: '#dc2626' },
              ]}
            />
          </div>
          <div class="card">
            <DailyBars
              title="Writes per day"
              days={days}
              series={[{ label: 'Writes', values: column('writes'), color: '#7c3aed' }]}
            />
          </div>
          <div class="card">
            <DailyBars
              title="Reads per day"
              days={days}
              series={[{ label: 'Reads', values: column('reads'), color: '#0891b2' }]}
            />
          </div>
        </div>
      ) : null}
      {memories ? (
        <section class="card" aria-labelledby="stored-title">
          <h2 id="stored-title">Stored memories: {formatCount(memories.total)}</h2>
          <MemoryStates breakdown={memories} />
          <TopOwners breakdown={memories} />
        </section>
      ) : null}
    </Page>
  );
}
