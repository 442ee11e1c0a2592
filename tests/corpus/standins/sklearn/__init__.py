"""scikit-learn, absent: MorvanZhou's CNN tutorial draws a t-SNE of its last layer only when ``from
sklearn.manifold import TSNE`` succeeds, and its ``TSNE(n_iter=...)`` is refused by scikit-learn 1.7+
(``max_iter`` since), under PyTorch too; with this stand-in first on the path that import fails, as without
scikit-learn."""
raise ImportError("scikit-learn stand-in: not installed for the corpus programs")
