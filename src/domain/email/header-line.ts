/**
 * Line breaks of every kind: CR, LF, vertical tab, form feed, NEL (U+0085), and the line and
 * paragraph separators (U+2028, U+2029), the mandatory breaks of Unicode's line breaking rules.
 */
const LINE_BREAKS = /[\r\n\u000b\u000c\u0085\u2028\u2029]+/g;

/**
 * A value that goes into a single header line (the subject, From's display name, Reply-To, a header
 * of ours) with each run of line breaks collapsed to a space. SES's simple content and Postmark take
 * such values as they are: `Hi\r\nBcc: evil@x.com` as a subject wrote a Bcc header of its own.
 * Applied after rendering, since a template variable (a contact's firstName) can carry one too.
 */
export const singleLine = (value: string): string => value.replace(LINE_BREAKS, ' ');
