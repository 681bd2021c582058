/**
 * A process's capability sets as the kernel reports them (/proc/<pid>/status), by name, for the sandbox
 * suites: `CapEff: 00000000002001e1` reads as CAP_CHOWN, CAP_KILL, CAP_SETGID, CAP_SETUID, CAP_SETPCAP
 * and CAP_SYS_ADMIN.
 */
import fs from 'node:fs';

/** linux/capability.h, by bit number. */
const CAPABILITY_NAMES = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_DAC_READ_SEARCH',
  'CAP_FOWNER',
  'CAP_FSETID',
  'CAP_KILL',
  'CAP_SETGID',
  'CAP_SETUID',
  'CAP_SETPCAP',
  'CAP_LINUX_IMMUTABLE',
  'CAP_NET_BIND_SERVICE',
  'CAP_NET_BROADCAST',
  'CAP_NET_ADMIN',
  'CAP_NET_RAW',
  'CAP_IPC_LOCK',
  'CAP_IPC_OWNER',
  'CAP_SYS_MODULE',
  'CAP_SYS_RAWIO',
  'CAP_SYS_CHROOT',
  'CAP_SYS_PTRACE',
  'CAP_SYS_PACCT',
  'CAP_SYS_ADMIN',
  'CAP_SYS_BOOT',
  'CAP_SYS_NICE',
  'CAP_SYS_RESOURCE',
  'CAP_SYS_TIME',
  'CAP_SYS_TTY_CONFIG',
  'CAP_MKNOD',
  'CAP_LEASE',
  'CAP_AUDIT_WRITE',
  'CAP_AUDIT_CONTROL',
  'CAP_SETFCAP',
  'CAP_MAC_OVERRIDE',
  'CAP_MAC_ADMIN',
  'CAP_SYSLOG',
  'CAP_WAKE_ALARM',
  'CAP_BLOCK_SUSPEND',
  'CAP_AUDIT_READ',
  'CAP_PERFMON',
  'CAP_BPF',
  'CAP_CHECKPOINT_RESTORE',
];

const CAPABILITY_SETS = ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'] as const;
type CapabilitySet = (typeof CAPABILITY_SETS)[number];

/** The names of the bits set in a mask as /proc prints it (hexadecimal), in bit order. */
function capabilityNames(mask: string): string[] {
  const bits = BigInt(`0x${mask}`);
  const names: string[] = [];
  for (let bit = 0; bits >> BigInt(bit) !== 0n; bit++) {
    if ((bits >> BigInt(bit)) & 1n) names.push(CAPABILITY_NAMES[bit] ?? `capability ${bit}`);
  }
  return names;
}

/** Each of `pid`'s capability sets, by name. */
export function capabilitiesOf(pid: string | number): Record<CapabilitySet, string[]> {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const read = (set: CapabilitySet) => {
    const mask = new RegExp(`^${set}:\\s*([0-9a-f]+)$`, 'm').exec(status)?.[1];
    if (mask === undefined) throw new Error(`no ${set} in /proc/${pid}/status`);
    return capabilityNames(mask);
  };
  return Object.fromEntries(CAPABILITY_SETS.map((set) => [set, read(set)])) as Record<CapabilitySet, string[]>;
}
