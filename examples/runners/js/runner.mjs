#!/usr/bin/env node
// Run every Open Protocol decode and must-reject case of an unpacked fixture bundle against
// the decoder in src/open-protocol.mjs and print the verdict. The must-reject cases of category
// invalid-value (tier recommended) are left out, and counted: this small decoder does not check
// values against their column types.
//
//   node runner.mjs ticdc-conformance-fixtures-0.1.0
//
// Exit status: 0 every case passed, 1 a case failed, 2 usage error or a bundle that fails its
// checksums (refused before any case runs, naming each file at fault).

import { performance } from 'node:perf_hooks';
import { BundleError, compressed, decoderCases, openBundle, valueCheck } from './src/bundle.mjs';
import { differences } from './src/json.mjs';
import { DecodeError, decodeMessages } from './src/open-protocol.mjs';

/** The verdict on one case: null when it passed, else what went wrong. */
function check(testCase) {
  let events;
  try {
    events = decodeMessages(testCase.messages);
  } catch (error) {
    if (!(error instanceof DecodeError)) return `the decoder crashed: ${error.stack}`;
    return testCase.direction === 'reject'
      ? null
      : `rejected a message it must decode: ${error.message}`;
  }
  if (testCase.direction === 'reject')
    return `accepted a message it must reject (${events.length} event(s) decoded)`;
  const found = differences(testCase.expected, events);
  return found.length === 0
    ? null
    : `decoded events differ (expected vs actual, by JSON Pointer):\n    ${found.join('\n    ')}`;
}

function main([root]) {
  if (root === undefined) {
    console.error('usage: node runner.mjs UNPACKED_BUNDLE_FOLDER');
    return 2;
  }
  let bundle;
  try {
    bundle = openBundle(root);
  } catch (error) {
    if (!(error instanceof BundleError)) throw error;
    const problems = error.message.replaceAll('\n', '\n  ');
    console.error(`refused: the bundle ${root} fails its checksums:\n  ${problems}`);
    return 2;
  }
  const { kit_version: kit } = bundle.manifest;
  console.log(`bundle ${root}: kit ${kit}, ${bundle.sums.size} files match SHA256SUMS`);
  const started = performance.now();
  const tally = { decode: [0, 0], reject: [0, 0] };
  for (const testCase of decoderCases(bundle, 'open')) {
    const failure = check(testCase);
    tally[testCase.direction][failure === null ? 0 : 1] += 1;
    if (failure !== null) console.log(`FAIL ${testCase.id}\n  ${failure}`);
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(2);
  const unchecked = bundle.manifest.cases.filter((c) => c.protocol === 'open' && valueCheck(c));
  console.log(
    `open reject: ${unchecked.length} invalid-value case(s) left out: this decoder does not ` +
      'check values against their column types',
  );
  const packed = bundle.manifest.cases.filter(
    (c) => c.protocol === 'open' && c.direction !== 'encode' && compressed(c),
  );
  console.log(
    `open: ${packed.length} compressed case(s) left out: this decoder has no snappy or LZ4`,
  );
  for (const [direction, [passed, failed]] of Object.entries(tally)) {
    console.log(`open ${direction}: ${passed} passed, ${failed} failed`);
  }
  const [passed, failed] = [tally.decode[0] + tally.reject[0], tally.decode[1] + tally.reject[1]];
  const verdict = failed === 0 ? 'PASS' : 'FAIL';
  console.log(
    `verdict: ${verdict}: ${passed} passed, ${failed} failed (Open Protocol, JavaScript, ${seconds} s)`,
  );
  return failed === 0 ? 0 : 1;
}

process.exitCode = main(process.argv.slice(2));
