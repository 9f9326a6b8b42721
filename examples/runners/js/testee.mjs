#!/usr/bin/env node
// A testee (docs/testee-protocol.md) around the decoder in src/open-protocol.mjs: requests on
// stdin, one JSON object per line; one response line each on stdout; logs go to stderr.
//
//   ticdc-conformance run --protocol open --testee "node testee.mjs"
//
// Numbers: requests are read with lossless-json (integers as BigInt), and responses written
// with integers as BigInt and floats with a '.' or an exponent, so that commit ts beyond 2^53,
// integer vs float and -0.0 survive both ways (src/json.mjs).

import { createInterface } from 'node:readline';
import { parseKit, stringifyKit } from './src/json.mjs';
import { DecodeError, decodeMessages } from './src/open-protocol.mjs';
import { fromBase64 } from './src/text.mjs';

const hello = {
  protocol_version: 1n,
  name: 'ticdc-conformance example (JavaScript)',
  version: '0.1.0',
  capabilities: { decode: { open: ['tiflow', 'ticdc'] } },
};

function answer(request) {
  if (request.type === 'hello') return hello;
  if (request.type !== 'decode')
    return { id: request.id, skipped: { reason: `${request.type} is not implemented` } };
  const compression = request.options?.['large-message-handle-compression'] ?? 'none';
  if (compression !== 'none') {
    const message = `${compression}: this example has no snappy or LZ4 to decompress with`;
    return { id: request.id, error: { message, category: 'compression' } };
  }
  const messages = request.messages.map((m) => ({
    key: m.key === null ? null : fromBase64(m.key),
    value: m.value === null ? null : fromBase64(m.value),
  }));
  try {
    return { id: request.id, events: decodeMessages(messages) };
  } catch (error) {
    // category: the class of the fault (docs/testee-protocol.md), where the decoder knows it
    if (error instanceof DecodeError)
      return { id: request.id, error: { message: error.message, category: error.category } };
    throw error; // a bug in the decoder: crash, and the runner reports the case with this trace
  }
}

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  const request = parseKit(line);
  if (request.type === 'shutdown') break;
  process.stdout.write(`${stringifyKit(answer(request))}\n`);
}
