/**
 * A payment provider behind the billing service: a hosted checkout form, a signed callback and
 * a verification API. The routes and the billing service only speak this interface; adding a
 * provider is one more implementation and one more case in `createPaymentProvider`.
 */

/** What the checkout asks the provider to collect. The amount is the server's plan price. */
export interface CheckoutOrder {
  /** Our transaction id (unique per provider). */
  txnid: string;
  /** Decimal string with two places, e.g. `399.00`. */
  amount: string;
  /** What is bought: the plan code. */
  productInfo: string;
  firstname: string;
  email: string;
  phone?: string;
  /** The workspace, carried through the provider and signed (PayU `udf1`). */
  workspaceId: string;
}

/** A form the browser posts to the provider's hosted page. */
export interface CheckoutForm {
  url: string;
  fields: Record<string, string>;
}

/** A callback as received: its parsed fields, its raw body, its headers. */
export interface IncomingCallback {
  fields: Record<string, string>;
  rawBody: Buffer;
  header(name: string): string | undefined;
}

/** The parts of a (signature-checked) callback the billing service needs. */
export interface CallbackSummary {
  txnid: string;
  /** `success` when paid; anything else is a failed or pending payment. */
  status: 'success' | 'failure' | 'pending';
  /** The provider's own status word, as sent. */
  rawStatus: string;
  amount: string;
  productInfo: string;
  /** The workspace the checkout signed into the order (PayU `udf1`); may be empty. */
  workspaceId: string;
  /** The provider's payment id (PayU `mihpayid`); may be empty. */
  providerPaymentId: string;
  /** Idempotency key of this event: the same callback sent twice has the same key. */
  eventKey: string;
}

/** The provider's own record of a transaction, from its verification API. */
export type Verification =
  | {
      kind: 'found';
      status: 'success' | 'failure' | 'pending';
      rawStatus: string;
      amount: string;
      providerPaymentId: string;
    }
  | { kind: 'not_found' }
  /** The provider could not be asked (down, timeout, 5xx, a malformed answer): try later. */
  | { kind: 'unavailable'; reason: string };

export interface ProbeResult {
  reachable: boolean;
  latencyMs: number;
  error?: string;
}

export interface PaymentProvider {
  /** `payu`, ...: stored with transactions and events. */
  readonly name: string;
  checkoutForm(order: CheckoutOrder): CheckoutForm;
  /** Whether the callback carries a valid signature (constant-time comparisons). */
  verifySignature(callback: IncomingCallback): boolean;
  /** Reads a signature-checked callback; undefined when required fields are missing. */
  summarize(fields: Record<string, string>): CallbackSummary | undefined;
  /** Asks the provider's API about a transaction, with retries, backoff and timeouts. */
  verifyTransaction(txnid: string): Promise<Verification>;
  /** A cheap request with a short timeout: does the verification API answer at all? */
  probe(): Promise<ProbeResult>;
}

/** Amounts compared as paise, so `399`, `399.0` and `399.00` agree. */
export function sameAmount(a: string, b: string): boolean {
  const paise = (value: string) =>
    /^\d+(\.\d{1,2})?$/.test(value.trim()) ? Math.round(Number(value.trim()) * 100) : NaN;
  const left = paise(a);
  return Number.isFinite(left) && left === paise(b);
}

/** A price in rupees as the two-decimal string providers expect. */
export function formatAmount(rupees: number): string {
  return rupees.toFixed(2);
}
