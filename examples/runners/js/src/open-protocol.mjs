// A TiCDC Open Protocol decoder: Kafka key and value bytes to decoded events in the JSON form
// of docs/decoded-events.md, for both producer profiles (tiflow: classic TiCDC; ticdc: the new
// architecture) and the legacy 2020 forms. The rules are docs/open-protocol.md's:
//
//   key   = version:u64be(1) ‖ { length:u64be ‖ key JSON }×N
//   value =                    { length:u64be ‖ value JSON }×N     (resolved: length 0, no JSON)
//
// Key JSON: ts (uint64), scm, tbl, rid, ptn (int64), t (1 row, 2 DDL, 3 resolved), ohk, ccl.
// Row value: u (new image), p (old image of an update), d (old image of a delete); a column is
// {t: type code, h: true (handle key), f: flag bits, v: value}. Every other input is refused
// with a DecodeError naming the part, the byte offset of the entry and the JSON Pointer, and
// the class of the fault (docs/fixture-format.md, must-reject categories): framing, length,
// type, range, schema or encoding.
//
// Known limit of this example: JavaScript objects list integer-like member names ("1", "20")
// first, so a table whose column names are such numbers gets them out of wire order.

import { isLosslessNumber } from 'lossless-json';
import { isObject, numberOf, parseWire } from './json.mjs';
import {
  decodeEscaping,
  fromBase64,
  goUnquote,
  bytesValue,
  textOrBytes,
  utf8OrBytes,
} from './text.mjs';

export class DecodeError extends Error {
  constructor(reason, { messageIndex, part, offset, pointer = '', category }) {
    super(
      `message ${messageIndex} ${part} at byte ${offset}${pointer ? ` ${pointer}` : ''}: ${reason}`,
    );
    this.name = 'DecodeError';
    this.category = category;
  }
}

/** An Error of a value reader, with the class of its fault. */
function invalid(category, reason) {
  return Object.assign(new Error(reason), { category });
}

/** A number that is not what the member needs is out of range; anything else, of a wrong type. */
function numberClass(raw) {
  return isLosslessNumber(raw) ? 'range' : 'type';
}

/** `read(raw)`, where any fault of a text.mjs helper is one of encoding. */
function decoding(read) {
  try {
    return read();
  } catch (error) {
    throw Object.assign(error, { category: error.category ?? 'encoding' });
  }
}

const UINT64 = [0n, 2n ** 64n - 1n];
const INT64 = [-(2n ** 63n), 2n ** 63n - 1n];
const BINARY_FLAG = 1n;

/** A JSON integer within [min, max] as BigInt, else null (floats, `-0`, other types). */
function integerIn(raw, [min, max]) {
  if (!isLosslessNumber(raw)) return null;
  const value = numberOf(raw.value);
  return typeof value === 'bigint' && value >= min && value <= max ? value : null;
}

function floatOf(raw) {
  if (!isLosslessNumber(raw)) throw invalid('type', 'expected a JSON number');
  const value = Number(raw.value); // the printed digits as float64; Go writes -0.0 as -0
  if (!Number.isFinite(value))
    throw invalid('range', 'a float beyond float64, which TiCDC never writes');
  return value;
}

function text(raw, what = 'a JSON string') {
  if (typeof raw !== 'string') throw invalid('type', `expected ${what}`);
  return raw;
}

const decimalText = /^-?[0-9]+(?:\.[0-9]+)?$/;
const timestampText = /^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?$/;

/** A JSON string of the shape TiDB prints a DECIMAL or TIMESTAMP in. */
function matching(raw, pattern, what) {
  if (!pattern.test(text(raw))) throw invalid('range', `not ${what} text: ${JSON.stringify(raw)}`);
  return raw;
}

/** Any JSON scalar as it is: type code 255 and legacy columns without `f`. */
function scalar(raw) {
  if (typeof raw === 'string') return raw;
  if (isLosslessNumber(raw))
    return typeof numberOf(raw.value) === 'bigint' ? numberOf(raw.value) : floatOf(raw);
  throw invalid('type', 'expected a JSON scalar');
}

function nullOnly() {
  throw invalid('range', 'a column of type NULL holds only null');
}

function integer(raw) {
  const value = integerIn(raw, [INT64[0], UINT64[1]]);
  if (value === null)
    throw invalid(numberClass(raw), 'expected a JSON integer in the int64/uint64 range');
  return value;
}

const byTypeCode = new Map([
  // TINYINT SMALLINT INT BIGINT MEDIUMINT YEAR BIT ENUM SET: integers
  ...[1, 2, 3, 8, 9, 13, 16, 247, 248].map((code) => [code, integer]),
  [4, floatOf], // FLOAT: its shortest float32 digits, read as float64
  [5, floatOf], // DOUBLE
  [6, nullOnly], // NULL
  // TIMESTAMP: in the TiCDC server's time zone, which the message does not name
  [7, (raw) => ({ timestamp: matching(raw, timestampText, 'a timestamp'), zone: null })],
  // CHAR/VARCHAR/VAR_STRING: text; BINARY/VARBINARY (BinaryFlag): Go-quoted bytes
  ...[15, 253, 254].map((code) => [
    code,
    (raw, flags) =>
      decoding(() =>
        flags & BINARY_FLAG ? bytesValue(goUnquote(text(raw))) : textOrBytes(text(raw)),
      ),
  ]),
  // TEXT and BLOB types: base64 of the bytes, text unless BinaryFlag or not UTF-8
  ...[249, 250, 251, 252].map((code) => [
    code,
    (raw, flags) => {
      const bytes = decoding(() => fromBase64(text(raw, 'a base64 JSON string')));
      return decoding(() => (flags & BINARY_FLAG ? bytesValue(bytes) : utf8OrBytes(bytes)));
    },
  ]),
  // DATE TIME DATETIME NEWDATE VECTOR JSON: TiDB's text
  ...[10, 11, 12, 14, 225, 245].map((code) => [code, (raw) => text(raw)]),
  [246, (raw) => ({ decimal: matching(raw, decimalText, 'a decimal') })], // scale kept: "1.50"
  [255, scalar], // GEOMETRY and the like: the JSON value as it is
]);

/** The decoded value of a column's `v`; `flags` null (the legacy form) passes `v` as it is. */
function readValue(typeCode, raw, flags) {
  if (flags === null) return raw === null ? null : scalar(raw);
  const reader = byTypeCode.get(typeCode);
  if (reader === undefined) throw invalid('range', `unknown type code ${typeCode}`);
  return raw === null ? null : reader(raw, flags);
}

/** One JSON document inside the frame: what an error needs to say where it is. */
class Entry {
  constructor(part, offset, messageIndex) {
    Object.assign(this, { part, offset, messageIndex });
  }

  fail(category, reason, ...tokens) {
    const pointer = tokens.map((t) => `/${t.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
    throw new DecodeError(reason, { ...this, pointer, category });
  }

  parse(bytes) {
    try {
      return parseWire(decodeEscaping(bytes));
    } catch (error) {
      // a document cut off at the end of its entry: the entry's length is too small
      const category = error.message.includes('reached end of input') ? 'length' : 'framing';
      return this.fail(category, `invalid JSON: ${error.message}`);
    }
  }
}

function has(object, name) {
  return Object.hasOwn(object, name);
}

function columns(raw, member, entry) {
  if (!isObject(raw)) entry.fail('type', 'must be an object of columns', member);
  return Object.entries(raw).map(([name, column]) => {
    if (!isObject(column)) entry.fail('type', 'a column must be an object', member, name);
    const unknown = Object.keys(column).find((m) => !['t', 'h', 'f', 'v'].includes(m));
    if (unknown !== undefined) entry.fail('schema', 'unknown column member', member, name, unknown);
    if (!has(column, 't')) entry.fail('schema', 'column has no t', member, name);
    const typeCode = integerIn(column.t, [0n, 255n]);
    if (typeCode === null)
      entry.fail(numberClass(column.t), 't must be a type code 0..255', member, name, 't');
    const flags = has(column, 'f') ? integerIn(column.f, UINT64) : null;
    if (has(column, 'f') && flags === null)
      entry.fail(numberClass(column.f), 'f must be uint64 flag bits', member, name, 'f');
    if (has(column, 'h') && column.h !== true) {
      const category = typeof column.h === 'boolean' ? 'range' : 'type';
      entry.fail(category, 'h is only ever present as true', member, name, 'h');
    }
    if (!has(column, 'v')) entry.fail('schema', 'column has no v', member, name);
    let value;
    try {
      value = readValue(Number(typeCode), column.v, flags);
    } catch (error) {
      entry.fail(error.category ?? 'type', error.message, member, name, 'v');
    }
    return {
      name,
      value,
      type_code: typeCode,
      flags,
      handle_key: column.h === true,
      mysql_type: null,
      ambiguity: null,
    };
  });
}

function checkKey(raw, entry) {
  if (!isObject(raw)) entry.fail('type', 'key must be a JSON object');
  const unknown = Object.keys(raw).find(
    (m) => !['ts', 'scm', 'tbl', 'rid', 'ptn', 't', 'ohk', 'ccl'].includes(m),
  );
  if (unknown !== undefined) entry.fail('schema', 'unknown key member', unknown);
  const integerMember = (name, range) => {
    if (!has(raw, name)) return null;
    const value = integerIn(raw[name], range);
    if (value === null) {
      const reason = `${name} must be an integer in [${range[0]}, ${range[1]}]`;
      entry.fail(numberClass(raw[name]), reason, name);
    }
    return value;
  };
  const textMember = (name) => {
    if (has(raw, name) && typeof raw[name] !== 'string')
      entry.fail('type', `${name} must be a string`, name);
    return has(raw, name) ? raw[name] : null;
  };
  if (!has(raw, 'ts')) entry.fail('schema', 'key has no ts');
  if (!has(raw, 't')) entry.fail('schema', 'key has no t');
  const key = {
    ts: integerMember('ts', UINT64),
    rid: integerMember('rid', INT64),
    ptn: integerMember('ptn', INT64),
    scm: textMember('scm') ?? '',
    tbl: textMember('tbl') ?? '',
    ccl: textMember('ccl'),
    ohk: has(raw, 'ohk') ? raw.ohk : false,
    t: integerIn(raw.t, [1n, 3n]),
  };
  if (typeof key.ohk !== 'boolean') entry.fail('type', 'ohk must be a boolean', 'ohk');
  if (key.t === null)
    entry.fail(numberClass(raw.t), 't must be 1 (row), 2 (DDL) or 3 (resolved)', 't');
  return key;
}

function row(key, value, entry) {
  if (!isObject(value)) entry.fail('type', 'row value must be a JSON object');
  const unknown = Object.keys(value).find((m) => !['u', 'p', 'd'].includes(m));
  if (unknown !== undefined) entry.fail('schema', 'unknown row member', unknown);
  let op, before, after;
  if (has(value, 'd')) {
    if (Object.keys(value).length > 1) entry.fail('schema', 'd (delete) cannot come with u or p');
    [op, before, after] = ['delete', columns(value.d, 'd', entry), null];
  } else if (has(value, 'u')) {
    op = has(value, 'p') ? 'update' : 'insert';
    after = columns(value.u, 'u', entry);
    before = has(value, 'p') ? columns(value.p, 'p', entry) : null;
  } else {
    entry.fail('schema', 'row value needs u (insert, update) or d (delete)');
  }
  return {
    kind: 'row',
    commit_ts: key.ts,
    schema: key.scm,
    table: key.tbl,
    op,
    before,
    after,
    partition_id: key.ptn,
    table_id: null,
    row_id: key.rid,
    schema_version: null,
    handle_key_only: key.ohk,
    claim_check_location: key.ccl,
  };
}

function ddl(key, value, entry) {
  if (!isObject(value)) entry.fail('type', 'DDL value must be a JSON object');
  const members = Object.keys(value).sort().join();
  if (members !== 'q,t') entry.fail('schema', 'DDL value has exactly q and t');
  if (typeof value.q !== 'string') entry.fail('type', 'q must be a string', 'q');
  const ddlType = integerIn(value.t, [0n, 255n]); // a JSON number, not a string as old documents say
  if (ddlType === null)
    entry.fail(numberClass(value.t), 't must be an ActionType number 0..255', 't');
  return {
    kind: 'ddl',
    commit_ts: key.ts,
    schema: key.scm,
    table: key.tbl,
    query: value.q,
    ddl_type: ddlType,
    ddl_kind: null,
    table_info: null,
    pre_table_info: null,
  };
}

/** The length-prefixed entry at `position`: [its bytes, the position after it]. */
function readEntry(data, position, part, messageIndex) {
  const left = data.length - position;
  if (left < 8)
    throw new DecodeError(`${left} bytes left where an 8-byte length belongs`, {
      messageIndex,
      part,
      offset: position,
      category: 'length',
    });
  const size = new DataView(data.buffer, data.byteOffset + position, 8).getBigUint64(0);
  if (size > BigInt(left - 8))
    throw new DecodeError(`entry length ${size} exceeds the ${left - 8} bytes left`, {
      messageIndex,
      part,
      offset: position,
      category: 'length',
    });
  const end = position + 8 + Number(size);
  return [data.subarray(position + 8, end), end];
}

/** Decode one Kafka message (key and value as Uint8Array or null) into its events, in order. */
export function decodeMessage(key, value, messageIndex = 0) {
  if (key === null || key.length < 8)
    throw new DecodeError('key must start with the 8-byte version', {
      messageIndex,
      part: 'key',
      offset: 0,
      category: key === null ? 'framing' : 'length',
    });
  const version = new DataView(key.buffer, key.byteOffset, 8).getBigUint64(0);
  if (version !== 1n)
    throw new DecodeError(`version ${version}, only version 1 exists`, {
      messageIndex,
      part: 'key',
      offset: 0,
      category: 'framing',
    });
  const values = value ?? new Uint8Array(0);
  const events = [];
  let [keyPosition, valuePosition] = [8, 0];
  while (keyPosition < key.length) {
    const keyEntry = new Entry('key', keyPosition + 8, messageIndex);
    let keyJson, valueJson;
    [keyJson, keyPosition] = readEntry(key, keyPosition, 'key', messageIndex);
    if (valuePosition >= values.length) {
      throw new DecodeError(
        `key entry ${events.length} has no value entry (a resolved event has 8 zero bytes)`,
        { messageIndex, part: 'value', offset: valuePosition, category: 'framing' },
      );
    }
    const valueEntry = new Entry('value', valuePosition + 8, messageIndex);
    [valueJson, valuePosition] = readEntry(values, valuePosition, 'value', messageIndex);
    const parsedKey = checkKey(keyEntry.parse(keyJson), keyEntry);
    if (parsedKey.t === 3n) {
      if (valueJson.length > 0)
        valueEntry.fail('framing', "a resolved event's value entry must be empty");
      events.push({ kind: 'resolved', commit_ts: parsedKey.ts });
    } else {
      events.push(
        (parsedKey.t === 1n ? row : ddl)(parsedKey, valueEntry.parse(valueJson), valueEntry),
      );
    }
  }
  if (valuePosition < values.length)
    throw new DecodeError('value has more entries than the key', {
      messageIndex,
      part: 'value',
      offset: valuePosition,
      category: 'framing',
    });
  return events;
}

/** Decode the messages of one partition in order, as one consumer: every event, in order. */
export function decodeMessages(messages) {
  return messages.flatMap(({ key, value }, index) => decodeMessage(key, value, index));
}
