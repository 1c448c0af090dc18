import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Why delivering to this address is refused, if it is: only public unicast addresses are
 * reachable by default. Loopback, private, link-local (the cloud metadata service at
 * 169.254.169.254 among them), unique-local, carrier-grade NAT, multicast and reserved ranges are
 * the server's own network, not a customer's endpoint (server-side request forgery). An
 * IPv4-mapped IPv6 address is judged as the IPv4 address it carries.
 */
export function refusedAddressReason(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const range = ipaddr.process(address).range();
  return range === 'unicast' ? undefined : `${address} is a ${range} address`;
}

/** The host of a URL as `dns.lookup` and `isIP` take it (IPv6 literals without brackets). */
export function urlHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** Every address the host resolves to (the host itself when it is an IP literal). */
export async function resolveHost(host: string): Promise<string[]> {
  if (isIP(host)) return [host];
  return new Promise((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses.map((entry) => entry.address)),
    ),
  );
}

/**
 * Why an endpoint URL is refused, if it is: not http(s), credentials in it, a host that does not
 * resolve, or (unless `allowPrivate`) one that resolves to any address
 * {@link refusedAddressReason} refuses.
 */
export async function endpointUrlProblem(
  raw: string,
  { allowPrivate }: { allowPrivate: boolean },
): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be a URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not carry credentials';
  let addresses: string[];
  try {
    addresses = await resolveHost(urlHost(url));
  } catch {
    return `host ${url.hostname} does not resolve`;
  }
  if (addresses.length === 0) return `host ${url.hostname} does not resolve`;
  if (allowPrivate) return undefined;
  for (const address of addresses) {
    const reason = refusedAddressReason(address);
    if (reason) return `resolves to a non-public address (${reason})`;
  }
  return undefined;
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for `http.request` that resolves the host once and refuses the connection when an
 * address is not public: the check and the connection use the same answer, so a host that
 * re-resolves to an internal address after validation (DNS rebinding) is refused at delivery.
 */
export function publicOnlyLookup(
  hostname: string,
  options: LookupOptions,
  callback: LookupCallback,
): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const refused = addresses
      .map((entry) => refusedAddressReason(entry.address))
      .find((reason) => reason !== undefined);
    if (refused || addresses.length === 0) {
      const denied: NodeJS.ErrnoException = new Error(
        `refused: ${hostname} ${refused ? `resolves to ${refused}` : 'has no address'}`,
      );
      denied.code = 'EADDRNOTPUBLIC';
      return callback(denied, []);
    }
    if (options.all) return callback(null, addresses);
    const [first] = addresses as [LookupAddress];
    callback(null, first.address, first.family);
  });
}
