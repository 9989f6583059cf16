import { recordedOnce } from '../decider.js';

/**
 * A person's data handed to an admin (a subject access request): who asked, when, and how much, named
 * by the keyed hash of their address only, so the record of it holds no personal data in clear.
 */
export interface PersonalDataExported {
  type: 'PersonalDataExported';
  data: { exportId: string; accountId: string; person: string; messages: number; exportedAt: string };
}

export const exportStream = (exportId: string) => `export-${exportId}`;

export const dataExportDecider = recordedOnce<'PersonalDataExported', PersonalDataExported['data']>('PersonalDataExported');
