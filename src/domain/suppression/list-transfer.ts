import { recordedOnce } from '../decider.js';

/*
 * The account's whole suppression list brought in or taken away, as the audit trail records it: who,
 * when, and how many entries. Addresses are personal data; the record of their moving holds none.
 * Each is recorded before the first entry moves (an import cut short is still on record).
 */

export interface SuppressionListImported {
  type: 'SuppressionListImported';
  data: { importId: string; accountId: string; entries: number; importedAt: string };
}
export interface SuppressionListExported {
  type: 'SuppressionListExported';
  data: { exportId: string; accountId: string; entries: number; exportedAt: string };
}

export const importStream = (importId: string) => `import-${importId}`;

export const suppressionListImportDecider = recordedOnce<'SuppressionListImported', SuppressionListImported['data']>('SuppressionListImported');
export const suppressionListExportDecider = recordedOnce<'SuppressionListExported', SuppressionListExported['data']>('SuppressionListExported');
