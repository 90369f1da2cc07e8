/** Drafting lives with the loader, whose capture hook drafts turns too: the importers take it from there. */
export * from "@cairn/loader/transcript/draft";
