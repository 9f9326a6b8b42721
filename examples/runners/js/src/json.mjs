// JSON without losing numbers (docs/fixture-format.md, "Comparing decoded events").
//
// JSON.parse reads every number as a float64: commit ts 463267587686662144 becomes
// 463267587686662140, the integer 2 and the float 2.0 look the same, and -0 loses its sign.
// lossless-json keeps each number's text; from it this module makes integers BigInt and other
// numbers float64, so that `typeof` tells an integer from a float, and writes floats back
// with a '.' or an exponent (2.0, -0.0) so that the reader on the other side does too.

import { isLosslessNumber, parse, stringify } from 'lossless-json';

const integerText = /^-?(?:0|[1-9][0-9]*)$/;

/**
 * An integer's digits as BigInt; any other number (and `-0`, which Go writes only for a
 * float's minus zero) as a float64.
 */
export function numberOf(text) {
  return integerText.test(text) && text !== '-0' ? BigInt(text) : Number(text);
}

/**
 * JSON as TiCDC writes it: numbers stay LosslessNumber (their exact text) for the decoder to
 * read by column type, and a member written twice keeps its last value, as Go's readers do
 * (profile ticdc writes "ohk" twice in claim-check keys).
 */
export function parseWire(text) {
  return parse(text, null, { onDuplicateKey: ({ newValue }) => newValue });
}

/** JSON written by the kit (manifest, decoded.jsonl, testee requests): integers as BigInt. */
export function parseKit(text) {
  return parse(text, null, numberOf);
}

/** Whether a parsed wire value is a JSON object (not an array, a number or null). */
export function isObject(value) {
  return (
    value !== null && typeof value === 'object' && !Array.isArray(value) && !isLosslessNumber(value)
  );
}

/** A float64 as JSON that a reader takes for a float: 2 as "2.0", minus zero as "-0.0". */
export function floatText(value) {
  if (!Number.isFinite(value)) throw new Error(`${value} is not a JSON number`);
  if (Object.is(value, -0)) return '-0.0';
  const text = String(value);
  return /[.eE]/.test(text) ? text : `${text}.0`;
}

/** JSON text of a value whose integers are BigInt and whose numbers are floats. */
export function stringifyKit(value) {
  return stringify(value, null, undefined, [
    { test: (v) => typeof v === 'number', stringify: floatText },
  ]);
}

function kind(value) {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value; // bigint (integer) and number (float) differ
}

function show(value) {
  const text = stringifyKit(value);
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}

/**
 * How `actual` differs from `expected`, as "JSON Pointer: expected …, got …" lines (at most a
 * dozen): objects by member whatever the order, arrays in order, integers exactly, floats by
 * value with the sign of zero, an integer never equal to a float, strings by code unit.
 */
export function differences(expected, actual, pointer = '', out = []) {
  if (out.length >= 12) return out;
  const where = pointer || '/';
  if (kind(expected) !== kind(actual)) {
    out.push(`${where}: expected ${show(expected)}, got ${show(actual)}`);
  } else if (kind(expected) === 'array') {
    for (let i = 0; i < Math.max(expected.length, actual.length); i += 1) {
      if (i >= actual.length) out.push(`${pointer}/${i}: missing (expected ${show(expected[i])})`);
      else if (i >= expected.length) out.push(`${pointer}/${i}: unexpected ${show(actual[i])}`);
      else differences(expected[i], actual[i], `${pointer}/${i}`, out);
    }
  } else if (kind(expected) === 'object') {
    const names = [
      ...Object.keys(expected),
      ...Object.keys(actual).filter((n) => !Object.hasOwn(expected, n)),
    ];
    for (const name of names) {
      const at = `${pointer}/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      if (!Object.hasOwn(actual, name))
        out.push(`${at}: missing (expected ${show(expected[name])})`);
      else if (!Object.hasOwn(expected, name))
        out.push(`${at}: unexpected member ${show(actual[name])}`);
      else differences(expected[name], actual[name], at, out);
    }
  } else if (!Object.is(expected, actual)) {
    out.push(`${where}: expected ${show(expected)}, got ${show(actual)}`);
  }
  return out;
}
