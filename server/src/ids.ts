const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a string is a uuid: ids that are not cannot exist, and must not reach a uuid column. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
