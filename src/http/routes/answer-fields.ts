import { z } from 'zod';

/**
 * An instant in an answer. Always written by toISOString (UTC, milliseconds, `Z`): declared as
 * date-time, an SDK hands its callers a date rather than a string to parse.
 */
export const instant = z.iso.datetime();

/**
 * One of `values`, or null. OAS 3.0.3 admits null in a nullable enum only when the enum lists it,
 * which zod's output leaves out: a validating client would refuse every null.
 */
export const nullableEnum = <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values).nullable().meta({ enum: [...values, null] });
