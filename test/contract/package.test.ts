import { contract } from '@mnemo/contract';
import { describe, expect, it } from 'vitest';

describe('contract test package', () => {
  it('sees the contract it checks', () => {
    expect(Object.keys(contract)).toContain('memories');
  });
});
