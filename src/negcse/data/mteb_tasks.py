"""The papers' MTEB tasks and metric names, as data (no ``mteb`` import: tables use it too)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskSpec:
    """One MTEB task as the papers ran it: the task name, its Hugging Face subset and split."""

    name: str
    subset: str = "default"
    split: str = "test"


# GCSE Table 6 (column order) and SAN Figure 2: the four reranking tasks.
RERANKING: tuple[TaskSpec, ...] = (
    TaskSpec("AskUbuntuDupQuestions"),
    TaskSpec("MindSmallReranking"),
    TaskSpec("SciDocsRR"),
    TaskSpec("StackOverflowDupQuestions"),
)
# SAN paper, Section 4.4 (Table 4): the ten classification tasks, English subsets.
CLASSIFICATION: tuple[TaskSpec, ...] = (
    TaskSpec("AmazonCounterfactualClassification", "en"),
    TaskSpec("AmazonReviewsClassification", "en"),
    TaskSpec("Banking77Classification"),
    TaskSpec("EmotionClassification"),
    TaskSpec("MassiveIntentClassification", "en"),
    TaskSpec("MassiveScenarioClassification", "en"),
    TaskSpec("MTOPDomainClassification", "en"),
    TaskSpec("MTOPIntentClassification", "en"),
    TaskSpec("ToxicConversationsClassification"),
    TaskSpec("TweetSentimentExtractionClassification"),
)
GROUPS: dict[str, tuple[TaskSpec, ...]] = {
    "reranking": RERANKING,
    "classification": CLASSIFICATION,
}
# Our metric name -> mteb's score key, per group (x100 in our outputs).
GROUP_METRICS: dict[str, dict[str, str]] = {
    "reranking": {"map": "map_at_1000", "mrr_at_10": "mrr_at_10"},
    "classification": {"accuracy": "accuracy"},
}
# mteb task type -> our group
TASK_TYPES: dict[str, str] = {"Reranking": "reranking", "Classification": "classification"}
# The metric the papers print per task and average (GCSE Table 6: MAP; SAN Table 4: accuracy).
HEADLINE: dict[str, str] = {"reranking": "map", "classification": "accuracy"}
METRIC_LABELS: dict[str, str] = {"map": "MAP", "mrr_at_10": "MRR@10", "accuracy": "Acc."}
# Column labels of the tables (the papers' abbreviations where they print one).
SHORT: dict[str, str] = {
    "AskUbuntuDupQuestions": "AskU.",
    "SciDocsRR": "SciDocsRR",
    "StackOverflowDupQuestions": "StackO.",
    "MindSmallReranking": "MindSmall",
    "AmazonCounterfactualClassification": "AmzCF",
    "AmazonReviewsClassification": "AmzRev",
    "Banking77Classification": "Bank77",
    "EmotionClassification": "Emotion",
    "MassiveIntentClassification": "MassInt",
    "MassiveScenarioClassification": "MassScn",
    "MTOPDomainClassification": "MTOPDom",
    "MTOPIntentClassification": "MTOPInt",
    "ToxicConversationsClassification": "ToxConv",
    "TweetSentimentExtractionClassification": "TweetSent",
}
