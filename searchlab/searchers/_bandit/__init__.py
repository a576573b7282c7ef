"""Bandit search on a derivation DAG (paper 002): the descent walker and bandit base, Monte-Carlo, TAG, UCT."""
