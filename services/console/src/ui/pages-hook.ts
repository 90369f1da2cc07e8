import { useCallback, useEffect, useRef, useState } from "preact/hooks";

export interface Page<T> {
  items: T[];
  next: string | null;
}

/**
 * A listing read a page at a time, as the API pages it: what was read so far, the cursor of the next page,
 * whether a page is on its way, and the last error. Starts over whenever `fetchPage` changes: the caller makes it
 * with `useCallback` over what the listing depends on. Only the latest read counts: a page that arrives after
 * the listing started over (another agent asked for, a reload) or after a later read began is dropped, so
 * a slow answer never shows one listing's rows under another's filters.
 */
export function usePages<T>(fetchPage: (cursor: string | null) => Promise<Page<T>>) {
  const [items, setItems] = useState<T[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(undefined);
  const latestReadRef = useRef(0);

  /** Never rejects: a failed page is kept as the error. */
  const load = useCallback(
    async (after: string | null) => {
      const read = ++latestReadRef.current;
      setLoading(true);
      setError(undefined);
      try {
        const page = await fetchPage(after);
        if (read !== latestReadRef.current) return;
        setItems((previous) => (after ? [...previous, ...page.items] : page.items));
        setCursor(page.next);
      } catch (caught) {
        if (read === latestReadRef.current) setError(caught);
      } finally {
        if (read === latestReadRef.current) setLoading(false);
      }
    },
    [fetchPage],
  );

  useEffect(() => {
    setItems([]);
    setCursor(null);
    void load(null);
  }, [load]);

  return {
    items,
    loading,
    error,
    /** The next page, when there is one. */
    more: cursor ? () => void load(cursor) : undefined,
    reload: () => void load(null),
    /** Takes one item out of what is shown (after it was acted on). */
    drop: (keep: (item: T) => boolean) => setItems((previous) => previous.filter(keep)),
    /** Changes what is shown of the items read so far (after they were acted on). */
    update: (change: (item: T) => T) => setItems((previous) => previous.map(change)),
  };
}
