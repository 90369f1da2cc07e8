export { noteOf, readUnits, type ReadContext, type ReadFunction, type Reading, type Strength } from "./read.js";
export { CAPTURE_MODEL } from "./capture-model.js";
export { featureNames, readUnitsBy, score, unitFeatures, VOCABULARY, type KindModel, type LinearModel } from "./learned.js";
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
