import type { ComponentChildren, JSX } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { navigate } from './router';

export function Link(props: { href: string; children: ComponentChildren } & JSX.HTMLAttributes<HTMLAnchorElement>) {
  const { href, children, ...rest } = props;
  return (
    <a
      {...rest}
      href={href}
      onClick={(e) => {
        if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}

/** An error in words, announced to screen readers, next to what caused it. */
export function ErrorText({ error, id }: { error?: string | null; id?: string }) {
  if (!error) return null;
  return (
    <p class="error" role="alert" id={id}>
      {error}
    </p>
  );
}

/** A status shown in words and colour (the words carry the meaning). */
export function Status({ value }: { value: string }) {
  return <span class={`status status-${value}`}>{value}</span>;
}

/**
 * Loads data for a page; `reload` fetches it again after a change. What was loaded is for the `deps`
 * it was loaded with: once they change (other filters, another page) `data` is undefined until their
 * own load answers, and a refusal of theirs leaves none, so a result is never shown under filters it
 * is not for. An answer overtaken by a later request is dropped. A failed re-read for the same deps
 * keeps what they last showed, beside the error.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  // a new object whenever deps change: what each result is for
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const current = useMemo(() => ({}), deps);
  const [result, setResult] = useState<{ for?: object; data?: T; error?: string }>({});
  const [loading, setLoading] = useState(true);
  const latest = useRef(0);
  const reload = useCallback(() => {
    const request = ++latest.current;
    setLoading(true);
    load()
      .then(
        (data) => request === latest.current && setResult({ for: current, data }),
        (e: Error) => request === latest.current && setResult((r) => ({ for: current, data: r.for === current ? r.data : undefined, error: e.message })),
      )
      .finally(() => request === latest.current && setLoading(false));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [current]);
  useEffect(reload, [reload]);
  const mine = result.for === current;
  const setData = useCallback((data: T) => setResult({ for: current, data }), [current]);
  return { data: mine ? result.data : undefined, error: mine ? (result.error ?? null) : null, loading, reload, setData };
}

/** Runs an action from a button or form, keeping its error beside it. */
export function useAction<A extends unknown[]>(action: (...args: A) => Promise<void>) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (...args: A) => {
    setBusy(true);
    setError(null);
    try {
      await action(...args);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return { run, error, busy, setError };
}

/** Hands the browser a file to save (an export the page fetched, with its CSRF header). */
export function saveFile(data: Blob, filename: string) {
  const url = URL.createObjectURL(data);
  const link = Object.assign(document.createElement('a'), { href: url, download: filename });
  link.click();
  URL.revokeObjectURL(url);
}

export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // clipboard access can be refused (no permission, not focused): fall back to a selection
    const area = document.createElement('textarea');
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand('copy');
    area.remove();
  }
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      class="secondary"
      onClick={async () => {
        await copyText(text);
        setCopied(true);
        setTimeout(() => setCopied(false), 2000);
      }}
    >
      {copied ? 'Copied' : 'Copy'}
      <span class="visually-hidden"> {label}</span>
    </button>
  );
}

export function PageTitle({ children }: { children: ComponentChildren }) {
  useEffect(() => {
    document.title = `${typeof children === 'string' ? children : ''} · Courier Ledger`;
  }, [children]);
  return <h1 tabIndex={-1}>{children}</h1>;
}

/** Personal data an erasure or the account's retention has made unreadable: said so, not left blank. */
export function NotKept({ what }: { what: string }) {
  return <span class="muted">({what} no longer kept)</span>;
}

/** A message's recipient, or what it was once it is no longer kept. */
export function Recipient({ message }: { message: { to?: string | null; channel: string } }) {
  return <>{message.to ?? <NotKept what={message.channel === 'sms' ? 'number' : 'address'} />}</>;
}

/** An instant in the browser's time zone, named (`27/11/2026, 13:44:25 UTC`, `… GMT+14`): the zone date filters use too. */
export const formatTime = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString(undefined, { timeZoneName: 'short' }) : '—');

/**
 * An email's HTML in a frame that runs no script (sandbox without allow-scripts) and loads nothing:
 * its own policy allows only inline styles and data: images, so a tracking pixel or a remote image
 * is never fetched and viewing a message never counts as an open.
 */
export function EmailFrame({ html, title }: { html: string; title: string }) {
  const policy = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:">`;
  return <iframe class="email-frame" sandbox="" title={title} srcDoc={policy + html} referrerpolicy="no-referrer" />;
}

/**
 * An email's attachments in their order: the name (a download of the bytes the sandbox provider kept,
 * when `sandboxMessageId` names its record), type, size and, for an inline image, its content id.
 */
export function AttachmentList({
  attachments,
  sandboxMessageId,
}: {
  attachments: { filename: string; contentType: string; size: number; contentId?: string | null }[];
  sandboxMessageId?: string;
}) {
  return (
    <ul class="plain">
      {attachments.map((a, position) => (
        <li key={position}>
          {sandboxMessageId ? (
            <a href={`/api/sandbox/emails/${encodeURIComponent(sandboxMessageId)}/attachments/${position}`} download={a.filename}>
              {a.filename}
            </a>
          ) : (
            a.filename
          )}{' '}
          ({a.contentType}, {a.size} bytes{a.contentId ? `, inline as cid:${a.contentId}` : ''})
        </li>
      ))}
    </ul>
  );
}

/** A data table; an empty column name is the row's actions (named for screen readers only). */
export function Table({ columns, caption, children }: { columns: string[]; caption?: string; children: ComponentChildren }) {
  return (
    <div class="table-scroll">
      <table>
        {caption && <caption>{caption}</caption>}
        <thead>
          <tr>
            {columns.map((c, i) => (
              <th scope="col" key={i}>
                {c || <span class="visually-hidden">Actions</span>}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/**
 * The state of a question asked before an action (a first button, then "Yes, …" and a way back),
 * with the keyboard's place kept: arming moves focus to the "Yes" button (`yes`), stepping back
 * (its button, Escape on either, or the action done) returns it to the first button (`first`) when
 * that is still on the page.
 */
export function useTwoStep() {
  const [armed, setArmed] = useState(false);
  const first = useRef<HTMLButtonElement>(null);
  const yes = useRef<HTMLButtonElement>(null);
  const moveFocus = useRef(false);
  // in the same commit as the buttons it focuses: a deferred effect left focus on the page for a
  // moment, where a key pressed at once went nowhere
  useLayoutEffect(() => {
    if (!moveFocus.current) return;
    moveFocus.current = false;
    (armed ? yes : first).current?.focus();
  }, [armed]);
  const set = (on: boolean) => {
    moveFocus.current = on !== armed;
    setArmed(on);
  };
  return {
    armed,
    arm: () => set(true),
    disarm: () => set(false),
    /** steps back leaving focus where it is (the person is typing elsewhere) */
    close: () => {
      moveFocus.current = false;
      setArmed(false);
    },
    first,
    yes,
    /** on the buttons shown while armed: Escape steps back */
    onKeyDown: (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      e.preventDefault();
      set(false);
    },
  };
}

/**
 * An action that cannot be undone, asked twice: its button, then in its place a button that does it
 * and one that steps back. All three end with what they act on, for screen readers
 * (`Remove example.com`, `Yes, remove example.com`, `Cancel and keep example.com`): a row can hold
 * another "Cancel" (a campaign's own), which a bare back button would share its name with. (No comma
 * after "Cancel": the hidden part is out of flow, and Chromium puts a space before it.) The question
 * closes once the action has run (its promise settled); a caller whose target can change keys the
 * button on it, so a question asked about one thing is never answered for another.
 */
export function ConfirmButton(props: {
  label: string;
  confirmLabel: string;
  backLabel?: string;
  /** what the person is asked, shown before the two buttons */
  question?: string;
  target: string;
  busy?: boolean;
  onConfirm: () => unknown;
}) {
  const step = useTwoStep();
  const target = <span class="visually-hidden"> {props.target}</span>;
  if (!step.armed) {
    return (
      <button type="button" class="danger" ref={step.first} disabled={props.busy} onClick={step.arm}>
        {props.label}
        {target}
      </button>
    );
  }
  return (
    <>
      {props.question && <span>{props.question} </span>}
      <button
        type="button"
        class="danger"
        ref={step.yes}
        disabled={props.busy}
        onKeyDown={step.onKeyDown}
        onClick={() => Promise.resolve(props.onConfirm()).finally(step.disarm)}
      >
        {props.confirmLabel}
        {target}
      </button>{' '}
      <button type="button" class="secondary" onKeyDown={step.onKeyDown} onClick={step.disarm}>
        {props.backLabel ?? 'Cancel'}
        <span class="visually-hidden"> and keep {props.target}</span>
      </button>
    </>
  );
}

/** A form whose submit runs an action (never a page load). */
export function ActionForm(props: { onSubmit: () => unknown; children: ComponentChildren } & Omit<JSX.HTMLAttributes<HTMLFormElement>, 'onSubmit'>) {
  const { onSubmit, children, ...rest } = props;
  return (
    <form
      {...rest}
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      {children}
    </form>
  );
}
