import {
  CHUNK_PROFILES,
  FEEDBACK_VALUES,
  LIMITS,
  MEMORY_TYPES,
  OWNER_ID_ALIASES,
  OWNER_TYPES,
  RETRIEVAL_PROFILES,
  SEARCH_MODES,
} from '@mnemo/contract';
import { describe, expect, it } from 'vitest';
import { between, listOf } from '../../src/mcp/schema.js';
import { TOOLS } from '../../src/mcp/tools.js';

const tool = (name: string) => {
  const found = TOOLS.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
};

const description = (name: string, field: string): string =>
  (tool(name).input.shape[field] as { description?: string }).description ?? '';

describe('tool descriptions quote the contract', () => {
  it('list every value of each enum field', () => {
    const cases: Array<[string, string, readonly string[]]> = [
      ['add_memory', 'memory_type', MEMORY_TYPES],
      ['add_memory', 'chunk_profile', CHUNK_PROFILES],
      ['add_memory', 'owner_type', OWNER_TYPES],
      ['search_memories', 'search_mode', SEARCH_MODES],
      ['search_memories', 'retrieval_profile', RETRIEVAL_PROFILES],
      ['list_memories', 'memory_type', MEMORY_TYPES],
      ['send_feedback', 'feedback', FEEDBACK_VALUES],
    ];
    for (const [name, field, values] of cases) {
      for (const value of values)
        expect(description(name, field), `${name}.${field}`).toContain(value);
    }
    for (const alias of OWNER_ID_ALIASES.filter((alias) => alias !== 'owner_id')) {
      expect(description('add_memory', 'owner_id')).toContain(alias);
    }
  });

  it('state the bounds the schemas enforce', () => {
    expect(description('add_memory', 'text')).toContain('1 to 50,000 characters');
    expect(description('add_memory', 'importance')).toContain('0.01 to 100');
    expect(description('add_memory', 'idempotency_key')).toContain('8 to 128 characters');
    expect(description('search_memories', 'query')).toContain('1 to 2,000 characters');
    expect(description('search_memories', 'top_k')).toContain(between(LIMITS.topK));
    expect(description('get_context', 'page_size')).toContain(between(LIMITS.searchPageSize));
    expect(description('list_memories', 'page_size')).toContain(between(LIMITS.listPageSize));
  });

  it('listOf and between format as prose', () => {
    expect(listOf(['a'], 'or')).toBe('a');
    expect(listOf(['a', 'b', 'c'], 'or', { b: 'note' })).toBe('a, b (note) or c');
    expect(listOf(['a', 'b'], 'and')).toBe('a and b');
    expect(between({ min: 0.01, max: 50_000 })).toBe('0.01 to 50,000');
  });
});
