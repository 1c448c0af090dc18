import { describe, expect, it } from 'vitest';
import { errorMessage, excerpt } from '../../src/providers/http-retry.js';

describe('errorMessage', () => {
  it('reads the message of every error body shape, else keeps the text', () => {
    expect(errorMessage('{"error":{"message":"bad input"}}')).toBe('bad input');
    expect(errorMessage('{"error":"model not loaded"}')).toBe('model not loaded');
    expect(errorMessage('{"message":"too many documents"}')).toBe('too many documents');
    expect(errorMessage('{"detail":"Not authenticated"}')).toBe('Not authenticated');
    expect(errorMessage('{"detail":[{"loc":["body"]}]}')).toBe('{"detail":[{"loc":["body"]}]}');
    expect(errorMessage('<html>Bad Gateway</html>')).toBe('<html>Bad Gateway</html>');
  });
});

describe('excerpt', () => {
  it('folds white space, masks every secret and says when the body is empty', () => {
    const secrets = ['sk-test-0123456789', 'azure-key-abcdef'];
    expect(excerpt('key  sk-test-0123456789\n\tand azure-key-abcdef ', secrets)).toBe(
      'key *** and ***',
    );
    expect(excerpt(' \n ', secrets)).toBe('(empty body)');
  });

  it('cuts at 200 characters', () => {
    expect(excerpt('x'.repeat(500), [])).toBe(`${'x'.repeat(200)}…`);
  });
});
