import { useState } from 'preact/hooks';
import { api, call } from '../api';
import { ActionForm, ErrorText, useAction } from '../ui';

const EMPTY = { email: '', firstName: '', lastName: '', company: '', listIds: '', tags: '' };

/** Several values typed in one field, separated by commas or semicolons, each once. */
const several = (text: string) => [...new Set(text.split(/[,;]/).map((v) => v.trim()).filter(Boolean))];

/** One contact by hand (POST /api/contacts upserts by email: an address already there is updated). */
export function AddContact({ onDone }: { onDone: () => void }) {
  const [form, setForm] = useState(EMPTY);
  const [done, setDone] = useState<string | null>(null);
  const add = useAction(async () => {
    setDone(null);
    const named = Object.fromEntries((['firstName', 'lastName', 'company'] as const).filter((k) => form[k].trim()).map((k) => [k, form[k].trim()]));
    const listIds = several(form.listIds);
    const tags = several(form.tags);
    const body = { email: form.email.trim(), ...named, ...(listIds.length && { listIds }), ...(tags.length && { tags }) };
    const result = api.POST('/api/contacts', { body });
    await call(result); // a refusal throws the API's words
    setDone(`${body.email} ${(await result).response.status === 201 ? 'added' : 'updated'}.`);
    setForm(EMPTY);
    onDone();
  });
  const field = (name: keyof typeof EMPTY) => ({
    name,
    value: form[name],
    onInput: (e: { currentTarget: HTMLInputElement }) => setForm({ ...form, [name]: e.currentTarget.value }),
  });
  return (
    <section aria-labelledby="add-contact">
      <h2 id="add-contact">Add a contact</h2>
      <ActionForm class="inline" onSubmit={() => add.run()}>
        <label>
          Email
          <input type="email" required {...field('email')} />
        </label>
        <label>
          First name
          <input {...field('firstName')} />
        </label>
        <label>
          Last name
          <input {...field('lastName')} />
        </label>
        <label>
          Company
          <input {...field('company')} />
        </label>
        <label>
          Lists
          <input {...field('listIds')} placeholder="news, vip" />
        </label>
        <label>
          Tags
          <input {...field('tags')} />
        </label>
        <button type="submit" disabled={add.busy}>
          Add contact
        </button>
        <ErrorText error={add.error} />
      </ActionForm>
      {done && <p role="status">{done}</p>}
    </section>
  );
}
