"""Prints the words of wordfreq's large list of a language, one a line: python scripts/wordfreq-words.py de"""

import sys

import wordfreq

for word in wordfreq.iter_wordlist(sys.argv[1], wordlist="large"):
    print(word)
