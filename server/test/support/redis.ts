/** The Redis the suite's shared-limit tests use (`.ci/run` makes sure one runs on loopback). */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
