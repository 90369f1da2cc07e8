export { readUnits, type ReadContext, type Reading, type Strength } from "./read.js";
export {
  CHANGE,
  CHOICE,
  DROP_START,
  INSTEAD,
  NOT_AN_APPROACH,
  OVER,
  PRONOUN_OBJECT,
  choiceCue,
  givesUpOutright,
  opensWithChoice,
  revertedObject,
} from "./rules.js";
export { sentencesOf, unitsOf, type Unit } from "./units.js";
export { contentWords, shared } from "./words.js";
