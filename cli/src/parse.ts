import { InvalidArgumentError } from 'commander';
import { MEMORY_TYPES, type Metadata, type MemoryType } from '@mnemo/client';

/** Commander argument parsers: a bad value is a usage error before any request. */
export function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) {
    throw new InvalidArgumentError('must be a positive integer');
  }
  return Number(value);
}

export function number(value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isFinite(parsed))
    throw new InvalidArgumentError('must be a number');
  return parsed;
}

export function memoryType(value: string): MemoryType {
  if (!(MEMORY_TYPES as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`must be one of ${MEMORY_TYPES.join(', ')}`);
  }
  return value as MemoryType;
}

export function metadata(value: string): Metadata {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('must be a JSON object, e.g. \'{"plan":"pro"}\'');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InvalidArgumentError('must be a JSON object');
  }
  return parsed as Metadata;
}

/** `a, b or c`, for help texts that name the contract's values. */
export function orList(values: readonly string[]): string {
  return values.length <= 1
    ? values.join('')
    : `${values.slice(0, -1).join(', ')} or ${values[values.length - 1]}`;
}

/** `a to b`, for help texts that quote the contract's bounds. */
export function range({ min, max }: { min: number; max: number }): string {
  return `${min} to ${max}`;
}

export function choice<T extends string>(values: readonly T[]) {
  return (value: string): T => {
    if (!(values as readonly string[]).includes(value)) {
      throw new InvalidArgumentError(`must be one of ${values.join(', ')}`);
    }
    return value as T;
  };
}
