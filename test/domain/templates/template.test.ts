import { expect } from 'chai';
import { templateDecider } from '../../../src/domain/templates/template.js';
import { given } from '../../support/given.js';

const fields = { name: 'n', subject: 's', html: 'h', text: 't' };
const saved = { type: 'TemplateSaved', data: { ...fields, id: 't1', accountId: 'a1', savedAt: '2026-01-01T00:00:00.000Z', created: true } };

describe('template decider', () => {
  it('create on a new stream saves it; a repeated create is a no-op', () => {
    expect(given(templateDecider).when({ kind: 'create', id: 't1', accountId: 'a1', fields, now: 'x' })).to.deep.equal([
      { type: 'TemplateSaved', data: { ...fields, id: 't1', accountId: 'a1', savedAt: 'x', created: true } },
    ]);
    expect(given(templateDecider, [saved]).when({ kind: 'create', id: 't1', accountId: 'a1', fields, now: 'y' })).to.deep.equal([]);
  });

  it('update merges the given fields; another account or a deleted template is not found', () => {
    expect(given(templateDecider, [saved]).when({ kind: 'update', id: 't1', accountId: 'a1', fields: { subject: 'new' }, now: 'y' })).to.deep.equal([
      { type: 'TemplateSaved', data: { ...fields, subject: 'new', id: 't1', accountId: 'a1', savedAt: 'y', created: false } },
    ]);
    expect(() => given(templateDecider, [saved]).when({ kind: 'update', id: 't1', accountId: 'a2', fields: {}, now: 'y' })).to.throw('template not found');
    const deleted = { type: 'TemplateDeleted', data: { id: 't1', accountId: 'a1', deletedAt: 'z' } };
    expect(() => given(templateDecider, [saved, deleted]).when({ kind: 'delete', id: 't1', accountId: 'a1', now: 'w' })).to.throw('template not found');
  });

  it("refuses a template that cannot be parsed, created or updated, naming each field's fault", () => {
    const broken = { ...fields, subject: 'Hi {{name', html: '<p>{{#items}}x</p>' };
    expect(() => given(templateDecider).when({ kind: 'create', id: 't1', accountId: 'a1', fields: broken, now: 'x' }))
      .to.throw('subject: template error: Unclosed tag at 9')
      .with.nested.property('details.issues')
      .that.deep.equals([
        { field: 'subject', message: 'template error: Unclosed tag at 9' },
        { field: 'html', message: 'template error: Unclosed section "items" at 18' },
      ]);
    expect(() => given(templateDecider, [saved]).when({ kind: 'update', id: 't1', accountId: 'a1', fields: { text: '{{/items}}' }, now: 'y' })).to.throw(
      'text: template error: Unopened section "items" at 0',
    );
    // other delimiters and triple mustaches are templates too
    expect(given(templateDecider, [saved]).when({ kind: 'update', id: 't1', accountId: 'a1', fields: { subject: '{{=<% %>=}}Hi <%name%>', html: '{{{raw}}}' }, now: 'y' })).to.have.length(1);
  });
});
