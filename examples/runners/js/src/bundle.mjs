// An unpacked fixture bundle (docs/fixture-format.md): check it against its SHA256SUMS before
// trusting a byte of it, then read its cases.

import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parseKit } from './json.mjs';

export class BundleError extends Error {}

const sumsLine = /^([0-9a-f]{64}) [ *](.+)$/;

function sha256(bytes) {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A bundle-relative name that stays inside the bundle: no absolute path, `..`, `\` or `:`. */
function isInside(name) {
  return !name.startsWith('/') && !/[\\:]/.test(name) && !name.split('/').includes('..');
}

function filesUnder(root, prefix = '') {
  return readdirSync(path.join(root, prefix), { withFileTypes: true }).flatMap((entry) => {
    const name = prefix ? `${prefix}/${entry.name}` : entry.name;
    return entry.isDirectory() ? filesUnder(root, name) : [name];
  });
}

/**
 * Check every file of the bundle at `root` against its SHA256SUMS (which covers the manifest)
 * and the manifest's own sha256 entries against SHA256SUMS; throw a BundleError naming each
 * file that is missing, differs or is not listed. Returns the bundle, ready to read.
 */
export function openBundle(root) {
  let sumsText;
  try {
    sumsText = readFileSync(path.join(root, 'SHA256SUMS'), 'utf8');
  } catch (error) {
    throw new BundleError(
      `SHA256SUMS: cannot read it (${error.code ?? error.message}): not an unpacked bundle`,
    );
  }
  const sums = new Map();
  const problems = [];
  sumsText.split('\n').forEach((line, index, lines) => {
    if (line === '' && index === lines.length - 1) return;
    const match = sumsLine.exec(line);
    if (match === null || sums.has(match[2]) || !isInside(match[2]))
      problems.push(
        `SHA256SUMS line ${index + 1}: not '<sha256>  <file inside the bundle>': ${JSON.stringify(line.slice(0, 100))}`,
      );
    else sums.set(match[2], match[1]);
  });
  for (const [name, digest] of sums) {
    let actual;
    try {
      actual = sha256(readFileSync(path.join(root, name)));
    } catch {
      problems.push(`${name}: missing`);
      continue;
    }
    if (actual !== digest)
      problems.push(`${name}: sha256 ${actual}, but SHA256SUMS says ${digest}`);
  }
  for (const name of filesUnder(root)) {
    if (name !== 'SHA256SUMS' && !sums.has(name))
      problems.push(`${name}: not listed in SHA256SUMS`);
  }
  if (problems.length > 0) throw new BundleError(problems.join('\n'));
  const manifest = parseKit(readFileSync(path.join(root, 'manifest.json'), 'utf8'));
  for (const fixture of Object.values(manifest.fixtures)) {
    for (const [name, digest] of Object.entries(fixture.sha256)) {
      if (sums.get(name) !== digest)
        problems.push(`${name}: the manifest's sha256 ${digest} is not SHA256SUMS's`);
    }
  }
  if (problems.length > 0) throw new BundleError(problems.join('\n'));
  return { root, manifest, sums };
}

/** A file the manifest names, read only when SHA256SUMS vouches for it. */
function checked(bundle, name) {
  if (!bundle.sums.has(name))
    throw new BundleError(`${name}: named by the manifest, not in SHA256SUMS`);
  return readFileSync(path.join(bundle.root, name));
}

/** The bytes of a checked file, or null for a null key or value. */
function bytesOf(bundle, name) {
  return name === null ? null : new Uint8Array(checked(bundle, name));
}

/** The JSON Lines of a checked file (split on \n only: text values hold U+2028). */
function jsonLines(bundle, name) {
  return checked(bundle, name).toString('utf8').split('\n').filter(Boolean).map(parseKit);
}

/**
 * The cases of one protocol a decoder answers (directions decode and reject), in id order:
 * {id, direction, messages: [{key, value}], expected: decoded events or null}.
 */
/**
 * Whether a case is a must-reject case of category invalid-value (tier recommended): a value
 * outside its column type, which only a decoder checking values (docs/errors.md) rejects.
 */
export function valueCheck(testCase) {
  return testCase.direction === 'reject' && testCase.tags.includes('invalid-value');
}

/**
 * Whether a case's messages are compressed (large-message-handle-compression snappy or lz4,
 * tag compression): this small decoder has no snappy or LZ4 and leaves them out.
 */
export function compressed(testCase) {
  return testCase.tags.includes('compression');
}

export function decoderCases(bundle, protocol) {
  return bundle.manifest.cases
    .filter(
      (c) =>
        c.protocol === protocol &&
        !compressed(c) &&
        (c.direction === 'decode' || (c.direction === 'reject' && !valueCheck(c))),
    )
    .map((c) => {
      const fixture = bundle.manifest.fixtures[c.fixture];
      return {
        id: c.id,
        direction: c.direction,
        messages: fixture.messages.map((m) => ({
          key: bytesOf(bundle, m.key),
          value: bytesOf(bundle, m.value),
        })),
        expected: c.direction === 'decode' ? jsonLines(bundle, fixture.decoded) : null,
      };
    });
}
