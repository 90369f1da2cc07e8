/** What a record's metadata holds, as Chroma keeps it: scalars under keys. */
export type Scalar = string | number | boolean;
export type Metadata = Record<string, Scalar>;
/** Chroma's metadata filter syntax (`$and`, `$eq`, `$gte`, ...). */
export type Where = Record<string, unknown>;
