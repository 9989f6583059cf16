/**
 * Where attachment bytes live: written once when a send is accepted, read by the provider call. The
 * event log keeps only a reference and a summary, so its readers (projections, process managers,
 * replay) never move megabytes they do not use, and bytes can be deleted where a log cannot be changed.
 */
export interface AttachmentStore {
  /** stores each blob under its id; an id already stored keeps its bytes (a retried command writes the same) */
  put(blobs: { id: string; content: Buffer }[]): Promise<void>;
  /** the bytes of each id found; an unknown (or deleted) id is absent from the map */
  get(ids: string[]): Promise<Map<string, Buffer>>;
  /** deletes the blobs; how many there were */
  delete(ids: string[]): Promise<number>;
}
