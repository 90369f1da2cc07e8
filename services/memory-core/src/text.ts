/** Small rules about strings that several layers share (answers, errors, snippets, the embedder's input). */

/** `text` as it is when it fits in `chars` characters, else cut to `chars` with an ellipsis as the last. */
export const clip = (text: string, chars: number): string => (text.length > chars ? `${text.slice(0, chars - 1).trimEnd()}…` : text);

/** The first half of a character outside the basic plane: a cut must not fall right after it. */
export const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;

/** The second half of such a character: a cut must not fall right before it. */
export const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;
