/**
 * Attachments of a transactional email: what a send may carry and what is refused. Pure rules over
 * the request's own fields. The bytes are kept apart from the event log (see src/ports/attachment-store.ts).
 */

export const MAX_ATTACHMENTS = 10;
/** Decoded bytes of all of a send's attachments together (7 MiB). */
export const MAX_ATTACHMENT_BYTES = 7 * 1024 * 1024;

export interface AttachmentInput {
  filename: string;
  /** base64 (standard alphabet, padded) */
  content: string;
  contentType?: string;
  contentId?: string;
}

/** What the read models keep of an attachment, and what a message shows of it. */
export interface AttachmentSummary {
  filename: string;
  contentType: string;
  /** set for an inline part the HTML names as `cid:<contentId>` */
  contentId: string | null;
  /** decoded size in bytes */
  size: number;
}

/** An attachment checked against the limits, with its bytes (decoded once, by the check). */
export interface CheckedAttachment extends AttachmentSummary {
  bytes: Buffer;
}

/**
 * An attachment as the message's queue event carries it: the summary and where its bytes are kept;
 * events written before the attachment store existed carry the bytes themselves (base64).
 */
export type QueuedAttachment = AttachmentSummary & ({ blobId: string } | { content: string });

/**
 * A content id goes into `Content-ID: <…>` as it is, so it is printable ASCII (`!` to `~`) without the
 * quote and angle brackets that would end or break it: `café` was written raw into the MIME sent to SES.
 */
export const CONTENT_ID_PATTERN = /^[!#-;=?-~]+$/;
export const CONTENT_ID_RULE = 'must be printable ASCII without spaces, angle brackets or quotes';

/** The bytes of a message's attachment `position` are kept under this id (stable across a retried command). */
export const attachmentBlobId = (messageId: string, position: number) => `${messageId}/${position}`;

export const attachmentSummary = ({ filename, contentType, contentId, size }: AttachmentSummary): AttachmentSummary => ({
  filename,
  contentType,
  contentId,
  size,
});

/**
 * Extensions refused as attachments: programs, installers, scripts and shortcuts that run when
 * opened on Windows, macOS or Linux. Mail providers and receiving servers bounce or quarantine them,
 * so a send carrying one would fail late; it is refused up front instead.
 */
export const REFUSED_EXTENSIONS = new Set([
  // Windows programs, installers and system files
  'exe', 'com', 'scr', 'pif', 'cpl', 'dll', 'sys', 'drv', 'ocx', 'msi', 'msp', 'mst', 'msc', 'msix', 'msixbundle',
  'appx', 'appxbundle', 'appref-ms', 'application', 'gadget', 'hta', 'inf', 'ins', 'isp', 'reg', 'scf', 'lnk',
  'url', 'xbap', 'diagcab', 'diagcfg', 'diagpack', 'cab', 'chm', 'hlp', 'vxd', 'lib', 'ex_', 'nsh',
  // Access projects and databases that run code, and Excel's native add-ins (DLLs)
  'ade', 'adp', 'mde', 'xll',
  // shell and script languages
  'bat', 'cmd', 'js', 'jse', 'mjs', 'cjs', 'vb', 'vbe', 'vbs', 'ws', 'wsc', 'wsf', 'wsh', 'ps1', 'ps1xml', 'ps2',
  'ps2xml', 'psc1', 'psc2', 'psd1', 'psm1', 'msh', 'msh1', 'msh2', 'mshxml', 'msh1xml', 'msh2xml', 'sct', 'shb',
  'sh', 'bash', 'csh', 'ksh', 'zsh', 'command', 'py', 'pyc', 'pyo', 'pyw',
  // Java and other runtimes
  'jar', 'jnlp', 'class',
  // macOS and Linux packages and apps
  'app', 'pkg', 'mpkg', 'dmg', 'deb', 'rpm', 'run', 'apk', 'xpi', 'crx',
  // Office files with macros that run, and disk images that hide programs from scanners
  'iso', 'img', 'vhd', 'vhdx', 'docm', 'dotm', 'xlsm', 'xltm', 'xlam', 'pptm', 'potm', 'ppam', 'ppsm', 'sldm',
]);

/**
 * Content types refused whatever the filename says (the type a recipient's client may act on): the
 * types of the refused extensions, so that a program does not pass under a harmless name. Office's
 * macro-enabled types are matched by name (see isRefusedContentType), there being one per format.
 */
export const REFUSED_CONTENT_TYPES = new Set([
  'application/x-msdownload',
  'application/x-msdos-program',
  'application/x-ms-installer',
  'application/x-msi',
  'application/x-ms-shortcut',
  'application/x-ms-application',
  'application/x-dosexec',
  'application/x-executable',
  'application/x-elf',
  'application/x-mach-binary',
  'application/x-sharedlib',
  'application/vnd.microsoft.portable-executable',
  'application/x-bat',
  'application/x-sh',
  'application/x-csh',
  'application/x-shellscript',
  'application/javascript',
  'application/x-javascript',
  'application/ecmascript',
  'text/javascript',
  'text/ecmascript',
  'application/vbscript',
  'text/vbscript',
  'application/hta',
  'application/java-archive',
  'application/x-java-archive',
  'application/x-java-jnlp-file',
  'application/vnd.android.package-archive',
  'application/x-apple-diskimage',
  'application/x-debian-package',
  'application/x-rpm',
  'application/x-iso9660-image',
  'application/x-python-code',
  'text/x-python',
  'application/x-powershell',
  'text/x-shellscript',
  'text/x-sh',
  'text/x-script.sh',
  'text/x-script.csh',
  'text/x-script.ksh',
  'text/x-script.zsh',
  'application/x-ksh',
  'application/x-shar',
  'text/x-script.python',
  // nodemailer's own spelling for .py
  'text/x-script.phyton',
  'application/x-bytecode.python',
  'application/node',
  'application/java-vm',
  'text/scriptlet',
  'text/scriplet',
  'application/x-ms-xbap',
  'application/x-internet-signup',
  'application/appx',
  'application/appxbundle',
  'application/msix',
  'application/msixbundle',
  'application/vnd.ms-cab-compressed',
  'application/vnd.ms-htmlhelp',
  'application/winhlp',
  'application/vnd.apple.installer+xml',
  'application/x-redhat-package-manager',
  'application/x-makeself',
  'application/x-xpinstall',
  'application/x-chrome-extension',
  'application/x-virtualbox-vhd',
  'application/x-virtualbox-vhdx',
]);

/** Whether a content type (with or without parameters, in any case) is refused as an attachment's. */
export function isRefusedContentType(contentType: string): boolean {
  const type = contentType.split(';')[0].trim().toLowerCase();
  return REFUSED_CONTENT_TYPES.has(type) || type.includes('macroenabled');
}

/** Decoded length of well-formed base64, without decoding it. */
function decodedSize(b64: string): number {
  const padding = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  return (b64.length / 4) * 3 - padding;
}

/**
 * The bytes of standard padded base64, or null when it is not that. Node's decoder skips characters
 * outside the alphabet and stops at padding, so each such character (or padding before the end)
 * leaves fewer bytes than the length promises; it also takes the URL-safe alphabet, refused here
 * apart. Decoding is the check: a regular expression over a megabyte cost twice a decode, and the
 * send needs the bytes anyway.
 */
function decodeBase64(b64: string): Buffer | null {
  if (b64.length % 4 !== 0 || b64.includes('-') || b64.includes('_')) return null;
  const bytes = Buffer.from(b64, 'base64');
  return bytes.length === decodedSize(b64) ? bytes : null;
}

/**
 * Characters a filename may not hold: those Windows refuses in a name (`< > : " / \\ | ? *`; a `:`
 * names an NTFS stream, so `x.exe:Zone.Identifier` or `x.exe::$DATA` is `x.exe` once saved), control
 * characters (C0, DEL, C1), line and paragraph separators, and invisible format characters (Unicode
 * category Cf: `x.exe` + U+200B, the right-to-left override of `x\u202Eexe.pdf`). Each could hide the
 * extension a client acts on from the check below.
 */
const UNSAFE_IN_FILENAME = /[<>:"/\\|?*\p{Cc}\p{Cf}\u2028\u2029]/u;
export const FILENAME_RULE = 'must be a file name without characters Windows refuses in one (< > : " / \\ | ? *), control characters or invisible formatting characters';

/** The extension of a name without the trailing dots, spaces and `;` Windows or a lax MIME parser drops. */
function lastExtension(filename: string): string {
  const name = filename.replace(/[.;\s]+$/, '').toLowerCase();
  const dot = name.lastIndexOf('.');
  return dot < 0 ? '' : name.slice(dot + 1);
}

/**
 * The refused extension a client could act on, if any: the last one of the name, and of the name up
 * to its first `;` (where a MIME parser reading an unquoted `filename=x.scr;.txt` ends it).
 */
function refusedExtensionOf(filename: string): string | null {
  for (const name of [filename, filename.split(';')[0]]) {
    const extension = lastExtension(name);
    if (REFUSED_EXTENSIONS.has(extension)) return extension;
  }
  return null;
}

export type AttachmentCheck = { ok: true; attachments: CheckedAttachment[] } | { ok: false; field: string; message: string };

/**
 * Checks a send's attachments against every limit, naming the field and the limit when one is
 * exceeded. `typeOf` gives the content type of a filename when the caller set none.
 */
export function checkAttachments(list: AttachmentInput[], typeOf: (filename: string) => string): AttachmentCheck {
  if (list.length > MAX_ATTACHMENTS) {
    return { ok: false, field: 'attachments', message: `at most ${MAX_ATTACHMENTS} attachments per message` };
  }
  const attachments: CheckedAttachment[] = [];
  const contentIds = new Set<string>();
  let total = 0;
  for (const [i, a] of list.entries()) {
    const at = `attachments.${i}`;
    if (UNSAFE_IN_FILENAME.test(a.filename)) return { ok: false, field: `${at}.filename`, message: FILENAME_RULE };
    const extension = refusedExtensionOf(a.filename);
    if (extension !== null) {
      return { ok: false, field: `${at}.filename`, message: `.${extension} files are refused as attachments (executable or script types)` };
    }
    const contentType = (a.contentType ?? typeOf(a.filename)).toLowerCase();
    if (isRefusedContentType(contentType)) {
      return { ok: false, field: `${at}.contentType`, message: `${contentType} is refused as an attachment type (executable or script types)` };
    }
    const bytes = decodeBase64(a.content);
    if (!bytes) {
      return { ok: false, field: `${at}.content`, message: 'must be valid base64 (standard alphabet, padded, no line breaks)' };
    }
    const size = bytes.length;
    total += size;
    if (total > MAX_ATTACHMENT_BYTES) {
      return { ok: false, field: 'attachments', message: `at most ${MAX_ATTACHMENT_BYTES} bytes (7 MB) decoded in all` };
    }
    if (a.contentId !== undefined) {
      if (contentIds.has(a.contentId)) return { ok: false, field: `${at}.contentId`, message: `${a.contentId} is used by another attachment` };
      contentIds.add(a.contentId);
    }
    attachments.push({ filename: a.filename, contentType, contentId: a.contentId ?? null, size, bytes });
  }
  return { ok: true, attachments };
}
