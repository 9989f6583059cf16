/**
 * The Content-Security-Policy of every response, by what it is. None allows an inline script, and no
 * page may be framed by another origin.
 */

/** An API answer (JSON, CSV, a file): nothing in it may load or run anything, should a browser render it. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/**
 * Swagger UI's page and the dashboard's: scripts and styles from this origin only. Swagger UI sets style
 * attributes from script (hence 'unsafe-inline' for styles only) and shows the schema's images as data:
 * URLs.
 */
export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The dashboard's: PAGE_CSP, and forms post to this origin only. Inline styles stay allowed (uPlot sizes
 * its canvas from script, and an email's own styling shows in the message preview, whose frame runs no
 * script and carries a stricter policy of its own).
 */
export const DASHBOARD_CSP = `${PAGE_CSP}; form-action 'self'`;

/** The pages a recipient's browser opens from an email (unsubscribing): one inline style, one form to itself. */
export const RECIPIENT_PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
