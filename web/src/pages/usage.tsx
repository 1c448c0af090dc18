import type { UsageResponse } from '@mnemo/contract';
import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage } from '../api.js';
import { ErrorNote, Page } from '../ui.js';

const RESOURCES = ['writes', 'reads', 'embeds'] as const;

/** One horizontal bar per resource: used against the plan's daily limit (plain SVG). */
function UsageChart({ usage }: { usage: UsageResponse }) {
  const limits = usage.limits;
  const width = 520;
  const row = 46;
  return (
    <svg
      class="chart"
      role="img"
      aria-labelledby="usage-chart-title"
      viewBox={`0 0 ${width} ${RESOURCES.length * row + 10}`}
    >
      <title id="usage-chart-title">
        {RESOURCES.map((name) => `${name} ${usage[name]} of ${limits?.[name] ?? 'no limit'}`).join(
          ', ',
        )}
      </title>
      {RESOURCES.map((name, i) => {
        const limit = limits?.[name];
        const ratio = limit ? Math.min(1, usage[name] / limit) : 0;
        const color = ratio >= 0.95 ? '#b42318' : ratio >= 0.8 ? '#b54708' : '#2563eb';
        const y = i * row + 10;
        return (
          <g key={name}>
            <text x="0" y={y + 12} class="chart-label">
              {name}
            </text>
            <rect x="0" y={y + 18} width={width} height="14" rx="7" fill="#e5e7eb" />
            <rect
              x="0"
              y={y + 18}
              width={Math.max(ratio * width, usage[name] > 0 ? 4 : 0)}
              height="14"
              rx="7"
              fill={color}
            />
            <text x={width} y={y + 12} text-anchor="end" class="chart-label">
              {usage[name]} / {limit ?? '∞'}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

export function Usage() {
  const [usage, setUsage] = useState<UsageResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    void (async () => {
      const res = await api.usage.getUsageToday();
      if (res.status !== 200) return setError(errorMessage(res));
      setUsage(res.body);
    })();
  }, []);
  return (
    <Page title="Usage today">
      <ErrorNote message={error} />
      {usage ? (
        <>
          <p>
            Plan <strong>{usage.plan}</strong> · day {usage.day ?? '—'} · mode{' '}
            <strong>{usage.operational_mode ?? 'normal'}</strong>
            {usage.grace_soft_downgrade ? ' · billing grace: limits floored' : ''}
          </p>
          {(usage.cap_alerts ?? []).map((alert) => (
            <p key={alert.resource} class={`note ${alert.severity}`} role="alert">
              {alert.severity === 'critical' ? 'Critical' : 'Warning'}: {alert.resource} at{' '}
              {Math.round(alert.ratio * 100)}% of its cap ({alert.used} of {alert.cap}).
            </p>
          ))}
          {(usage.cap_alerts ?? []).length === 0 ? (
            <p class="note ok">No cap alerts: every resource is below 80% of its cap.</p>
          ) : null}
          <div class="card">
            <UsageChart usage={usage} />
          </div>
          {usage.limits ? null : (
            <p class="muted">Limits are off on this server (MNEMO_LIMITS=off).</p>
          )}
        </>
      ) : null}
    </Page>
  );
}
