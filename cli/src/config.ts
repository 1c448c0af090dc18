import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_BASE_URL, TRANSPORT_KINDS, type TransportKind } from '@mnemo/client';
import { z } from 'zod';
import { orList } from './parse.js';

/** What the CLI connects with, after flags > environment > config file > defaults. */
export interface ResolvedConfig {
  baseUrl: string;
  apiKey: string | undefined;
  timeoutMs: number | undefined;
  transport: TransportKind | undefined;
  /** Where each value came from, for `--verbose`-style diagnostics and tests. */
  source: { baseUrl: string; apiKey: string; configFile: string };
}

/** The config file: `$MNEMO_CONFIG`, else `$XDG_CONFIG_HOME/mnemo/config.json`, else `~/.config/mnemo/config.json`. */
const ConfigFile = z
  .object({
    baseUrl: z.string().url().optional(),
    apiKey: z.string().min(1).optional(),
    timeoutMs: z.number().int().positive().optional(),
    transport: z.enum(TRANSPORT_KINDS).optional(),
  })
  .strict();

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function configPath(env: Record<string, string | undefined>, flag?: string): string {
  if (flag) return flag;
  if (env.MNEMO_CONFIG) return env.MNEMO_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'mnemo', 'config.json');
}

function readConfigFile(path: string, required: boolean): z.infer<typeof ConfigFile> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (!required && (error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ConfigError(`cannot read config file ${path}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConfigError(`config file ${path} is not valid JSON`);
  }
  const parsed = ConfigFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(
      `config file ${path}: ${issue?.path.join('.') || 'root'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

const nonEmpty = (value: string | undefined) =>
  value === undefined || value.trim() === '' ? undefined : value.trim();

export interface ConfigFlags {
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  config?: string | undefined;
  timeout?: string | undefined;
  transport?: string | undefined;
}

/** Flags win over the environment (`MNEMO_API_KEY`, `MNEMO_BASE_URL`), which wins over the file. */
export function resolveConfig(
  flags: ConfigFlags,
  env: Record<string, string | undefined>,
): ResolvedConfig {
  const path = configPath(env, flags.config);
  const file = readConfigFile(path, flags.config !== undefined || env.MNEMO_CONFIG !== undefined);
  const pick = (
    flag: string | undefined,
    envValue: string | undefined,
    fileValue: string | undefined,
  ) => {
    if (nonEmpty(flag)) return { value: nonEmpty(flag), source: 'flag' };
    if (nonEmpty(envValue)) return { value: nonEmpty(envValue), source: 'env' };
    if (fileValue) return { value: fileValue, source: path };
    return { value: undefined, source: 'default' };
  };
  const baseUrl = pick(flags.baseUrl, env.MNEMO_BASE_URL, file.baseUrl);
  const apiKey = pick(flags.apiKey, env.MNEMO_API_KEY, file.apiKey);
  const url = baseUrl.value ?? DEFAULT_BASE_URL;
  if (!URL.canParse(url)) throw new ConfigError(`base URL must be a URL, got "${url}"`);
  let timeoutMs = file.timeoutMs;
  if (flags.timeout !== undefined) {
    if (!/^\d+$/.test(flags.timeout) || Number(flags.timeout) < 1) {
      throw new ConfigError(
        `--timeout must be a positive number of milliseconds, got "${flags.timeout}"`,
      );
    }
    timeoutMs = Number(flags.timeout);
  }
  let transport = file.transport;
  if (flags.transport !== undefined) {
    if (!(TRANSPORT_KINDS as readonly string[]).includes(flags.transport)) {
      throw new ConfigError(
        `--transport must be ${orList(TRANSPORT_KINDS)}, got "${flags.transport}"`,
      );
    }
    transport = flags.transport as TransportKind;
  }
  return {
    baseUrl: url,
    apiKey: apiKey.value,
    timeoutMs,
    transport,
    source: { baseUrl: baseUrl.source, apiKey: apiKey.source, configFile: path },
  };
}
