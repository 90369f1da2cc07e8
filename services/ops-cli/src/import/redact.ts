/** Redaction lives with the loader, whose capture hook redacts transcripts too: the importers take it from there. */
export * from "@cairn/loader/transcript/redact";
