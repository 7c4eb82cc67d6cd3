// The benchmark's evaluator: scores a text by its words, run the same way in every engine.
export function evaluate(input) {
  const { text } = JSON.parse(input);
  const words = text.split(/\s+/).filter(Boolean);
  let score = 0;
  for (const word of words) score += word.length > 6 ? 2 : 1;
  const vowels = (text.match(/[aeiou]/gi) ?? []).length;
  return JSON.stringify({ words: words.length, score, vowels });
}
