import type { ErasureReceipt, OwnerType } from '@mnemo/contract';
import { useState } from 'preact/hooks';
import { api, errorMessage } from '../api.js';
import { ErrorNote, Field, formatTime } from '../ui.js';

/** The export of one owner as a file the browser downloads (the session cookie goes along). */
export function exportHref(ownerId: string, ownerType: OwnerType): string {
  const query = new URLSearchParams({ owner_id: ownerId, owner_type: ownerType });
  return `/v1/export?${query.toString()}`;
}

/**
 * Export and erase for one owner, self-contained for the memory browser to place: a download
 * of the owner's JSON Lines export, and an erasure that asks for the owner id typed again
 * before it runs and then shows the receipt. See docs/export.md.
 */
export function OwnerDataActions({
  ownerId,
  ownerType = 'user',
  onErased,
}: {
  ownerId: string;
  ownerType?: OwnerType;
  /** Told after an erasure, so the page around can reload its list. */
  onErased?: (receipt: ErasureReceipt) => void;
}) {
  const [confirming, setConfirming] = useState(false);
  const [typed, setTyped] = useState('');
  const [busy, setBusy] = useState(false);
  const [receipt, setReceipt] = useState<ErasureReceipt | null>(null);
  const [error, setError] = useState<string | null>(null);

  const erase = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const res = await api.ownerData.eraseOwner({
        body: { owner_id: ownerId, owner_type: ownerType },
      });
      if (res.status !== 200) {
        setError(`Erasing ${ownerId} failed: ${errorMessage(res)}`);
        return;
      }
      setReceipt(res.body);
      setConfirming(false);
      setTyped('');
      onErased?.(res.body);
    } catch {
      setError('The server could not be reached: nothing was erased. Try again.');
    } finally {
      setBusy(false);
    }
  };

  const erasedRows = receipt ? Object.entries(receipt.counts).filter(([, count]) => count > 0) : [];

  return (
    <div class="card owner-data" data-testid="owner-data">
      <div class="copy-row">
        <a
          class="button secondary"
          href={exportHref(ownerId, ownerType)}
          download={`${ownerType}-${ownerId}.jsonl`}
        >
          Export {ownerId}
        </a>
        {confirming ? null : (
          <button type="button" class="danger" onClick={() => setConfirming(true)}>
            Erase {ownerId}…
          </button>
        )}
      </div>
      {confirming ? (
        <form class="inline" onSubmit={(event) => void erase(event)}>
          <Field
            label={`Type ${ownerId} to erase everything stored for this owner`}
            hint="Memories, their history, links, pins, searches and feedback. This cannot be undone."
          >
            <input
              name="confirm_owner"
              autoComplete="off"
              value={typed}
              onInput={(e) => setTyped((e.target as HTMLInputElement).value)}
            />
          </Field>
          <button type="submit" class="danger" disabled={busy || typed !== ownerId}>
            {busy ? 'Erasing…' : 'Erase for good'}
          </button>
          <button type="button" class="secondary" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </form>
      ) : null}
      <ErrorNote message={error} />
      {receipt ? (
        <p class="note" role="status">
          {receipt.replayed
            ? `${receipt.owner_id} was already erased on ${formatTime(receipt.erased_at)}.`
            : `Erased ${receipt.owner_id} on ${formatTime(receipt.erased_at)}: ${
                erasedRows
                  .map(([table, count]) => `${count} ${table.replace(/_/g, ' ')}`)
                  .join(', ') || 'nothing was stored'
              }.`}{' '}
          Receipt <code>{receipt.receipt_id}</code>
        </p>
      ) : null}
    </div>
  );
}
