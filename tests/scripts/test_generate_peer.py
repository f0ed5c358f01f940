#!/usr/bin/env python3
"""scripts/generate_peer.py's prompt handling, without transformers or a build: the corpus lines it
hands the tokenizers library are the ones attnbench's workload.text takes (a trailing \\r dropped,
lines of only spaces and tabs skipped, the first N kept); the table names where the prompts came
from and their lengths; and it refuses to compare a run whose prefilled token count differs from the
peers' prompts (two tokenizers that read the text differently). Standard library only; CTest runs it
(tests/CMakeLists.txt)."""
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "scripts"))
import generate_peer  # noqa: E402


class CorpusLines(unittest.TestCase):
    def test_blank_lines_skipped_as_attnbench_skips_them(self):
        text = "first line\r\n   \n\t\n\nsecond  line \n third\nfourth"
        self.assertEqual(generate_peer.corpus_lines(text, 3), ["first line", "second  line ", " third"])

    def test_fewer_lines_than_asked(self):
        self.assertEqual(generate_peer.corpus_lines("only\n\n", 4), ["only"])
        self.assertEqual(generate_peer.corpus_lines(" \n\t\n", 4), [])

    def test_shipped_corpus_first_lines(self):
        corpus = (Path(generate_peer.ROOT) / "configs" / "data" / "handbook-corpus.txt").read_text(encoding="utf-8")
        lines = generate_peer.corpus_lines(corpus, 4)
        self.assertEqual(len(lines), 4)
        self.assertTrue(all(line.strip() for line in lines))


class Table(unittest.TestCase):
    META = {"prompts": 2, "length": 64, "prompt_source": "the first 2 lines of c.txt through t.json",
            "prompt_lengths": [12, 64], "prompt_tokens": 76}

    def test_prompt_words_name_source_and_lengths(self):
        words = generate_peer.prompt_words(self.META)
        self.assertIn("2 prompts of 12–64 tokens (76 in all", words)
        self.assertIn("the first 2 lines of c.txt through t.json", words)
        same = dict(self.META, prompt_lengths=[64, 64], prompt_tokens=128)
        self.assertIn("2 prompts of 64 tokens (128 in all", generate_peer.prompt_words(same))

    def test_directory_prepared_before_text_prompts(self):
        self.assertEqual(generate_peer.prompt_words({"prompts": 4, "length": 64}), "4 prompts of 64 tokens")
        generate_peer.check_prefilled({"prompts": 4, "length": 64}, {"workload": {"real_tokens": 256}}, 1)

    def test_differing_token_counts_refused(self):
        generate_peer.check_prefilled(self.META, {"workload": {"real_tokens": 76}}, 1)
        with self.assertRaises(SystemExit) as e:
            generate_peer.check_prefilled(self.META, {"workload": {"real_tokens": 75}}, 2)
        self.assertIn("prefilled 75 prompt tokens in round 2, the peers 76", str(e.exception.code))
        with self.assertRaises(SystemExit):
            generate_peer.check_prefilled(self.META, {}, 1)


if __name__ == "__main__":
    unittest.main()
