import type { BillingConfig } from '../../config.js';
import { PayuProvider } from './payu.js';
import type { PaymentProvider } from './types.js';
import { SetupError } from '../../errors.js';

export type { PaymentProvider } from './types.js';

/** The configured provider; undefined when billing is off (`MNEMO_BILLING_PROVIDER=none`). */
export function createPaymentProvider(config: BillingConfig): PaymentProvider | undefined {
  switch (config.provider) {
    case 'none':
      return undefined;
    case 'payu':
      if (!config.key || !config.salt || !config.successUrl || !config.failureUrl) {
        throw new SetupError('payu billing needs a key, a salt and the success and failure URLs');
      }
      return new PayuProvider({
        key: config.key,
        salt: config.salt,
        formUrl: config.formUrl,
        verifyUrl: config.verifyUrl,
        successUrl: config.successUrl,
        failureUrl: config.failureUrl,
        ...(config.webhookSecret ? { webhookSecret: config.webhookSecret } : {}),
        timeoutMs: config.verifyTimeoutMs,
        maxRetries: config.verifyRetries,
        probeTimeoutMs: config.probeTimeoutMs,
      });
  }
}
