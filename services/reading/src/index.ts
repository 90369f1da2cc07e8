export { readUnits, type ReadContext, type Reading, type Strength } from "./read.js";
export { sentencesOf, unitsOf, type Unit } from "./units.js";
