import type { ComponentChildren } from 'preact';

/** A page's frame: one h1 per page, so screen readers can jump to it. */
export function Page({
  title,
  children,
  actions,
}: {
  title: string;
  children: ComponentChildren;
  /** Buttons beside the heading. */
  actions?: ComponentChildren;
}) {
  return (
    <section aria-labelledby="page-title">
      <div class="page-head">
        <h1 id="page-title" tabIndex={-1}>
          {title}
        </h1>
        {actions ? <div class="actions">{actions}</div> : null}
      </div>
      {children}
    </section>
  );
}

export function ErrorNote({ message, onRetry }: { message: string | null; onRetry?: () => void }) {
  return message ? (
    <p class="note error" role="alert">
      {message}
      {onRetry ? (
        <>
          {' '}
          <button type="button" class="link" onClick={onRetry}>
            Try again
          </button>
        </>
      ) : null}
    </p>
  ) : null;
}

/** What a panel shows while its data is on the way. */
export function Loading({ what }: { what: string }) {
  return (
    <p class="muted loading" role="status">
      Loading {what}…
    </p>
  );
}

/** An empty list, saying what would fill it. */
export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty muted">{children}</div>;
}

export function Field({
  label,
  children,
  hint,
}: {
  label: string;
  children: ComponentChildren;
  hint?: string;
}) {
  return (
    <label class="field">
      <span>{label}</span>
      {children}
      {hint ? <small>{hint}</small> : null}
    </label>
  );
}

export const formatTime = (iso: string | null | undefined) =>
  iso ? new Date(iso).toLocaleString() : '—';

const numberFormat = new Intl.NumberFormat('en-US');

/** A count with thousands separators (1,234). */
export const formatCount = (value: number) => numberFormat.format(value);

/** A horizontal meter: `value` of `max`, coloured as it nears the limit. */
export function Meter({ label, value, max }: { label: string; value: number; max?: number }) {
  const ratio = max ? Math.min(1, value / max) : 0;
  const tone = ratio >= 0.95 ? 'critical' : ratio >= 0.8 ? 'warning' : 'ok';
  return (
    <div class="meter">
      <div class="meter-head">
        <span>{label}</span>
        <span>
          <strong>{formatCount(value)}</strong>
          {max !== undefined ? <span class="muted"> of {formatCount(max)}</span> : null}
        </span>
      </div>
      <div
        class="meter-track"
        role="meter"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={max ?? value}
        aria-valuenow={value}
      >
        <div
          class={`meter-fill ${tone}`}
          style={{ width: `${Math.max(ratio * 100, value > 0 && max ? 1 : 0)}%` }}
        />
      </div>
    </div>
  );
}
