import type { ComponentChildren } from 'preact';

/** A page's frame: one h1 per page, so screen readers can jump to it. */
export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">{title}</h1>
      {children}
    </section>
  );
}

export function ErrorNote({ message }: { message: string | null }) {
  return message ? (
    <p class="note error" role="alert">
      {message}
    </p>
  ) : null;
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
