import { isIPv6 } from 'node:net';
import type { Request } from 'express';

/**
 * The client a rate limit counts: the IP Express reports (`trust proxy` decides whether proxy
 * headers count), with IPv6 addresses folded to their /64, since one host usually owns a whole
 * /64 and could otherwise rotate through it.
 */
export function clientAddressKey(req: Pick<Request, 'ip' | 'socket'>): string {
  const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  if (ip.startsWith('::ffff:') && ip.includes('.')) return ip.slice('::ffff:'.length);
  return isIPv6(ip) ? ipv6Prefix64(ip) : ip;
}

/** `2001:db8:1:2:3:4:5:6` and `2001:db8:1:2::9` → `2001:db8:1:2::/64`. */
export function ipv6Prefix64(ip: string): string {
  const address = ip.split('%')[0] ?? ip;
  const [head = '', tail = ''] = address.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = address.includes('::') && tail ? tail.split(':') : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = address.includes('::')
    ? [...headGroups, ...Array<string>(missing).fill('0'), ...tailGroups]
    : headGroups;
  const prefix = groups.slice(0, 4).map((group) => (parseInt(group, 16) || 0).toString(16));
  return `${prefix.join(':')}::/64`;
}
