const STOP = new Set(
  "the a an and or of to in on for with by at from as is are was were be been would could should might may can must it its this that these those we i our us they their them not no so but if then than into onto out up over under after before about per via also only just now still more less very all each every any some one two three new old use used using make made do did done get got have has had which what when where who why how there here while until because since decided chose switched dropped abandoned reverted rejected going went with".split(
    " ",
  ),
);

/** The words of a text that say what it is about, stemmed roughly: restatements of one thing share most of them. */
export function contentWords(text: string): string[] {
  return [
    ...new Set(
      (text.toLowerCase().match(/[a-z0-9][a-z0-9_.-]*[a-z0-9]|[a-z0-9]/g) ?? [])
        .flatMap((w) => w.split(/[-.]/))
        .filter((w) => w.length > 1 && !STOP.has(w))
        .map((w) => w.replace(/(ing|ed|es|s)$/, "").replace(/e$/, "")),
    ),
  ];
}

/** How many words two lists share. */
export const shared = (a: readonly string[], b: readonly string[]) => a.filter((w) => b.includes(w)).length;
