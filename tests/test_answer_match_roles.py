"""`answer_match`'s clause and role rules, as pure functions: a fact said of another subject,
with a verb that reverses it, beside a contradicting second clause, or with two names in the
other order is never right (the classes of the sixth held-out adversarial set), and the
plain statements around each stay right."""

from __future__ import annotations

import pytest

from pytest_ragate.scoring.answer_match import Expectation, check_answer

CHAIR = Expectation(facts=["Priya"], question="Who chaired the Q3 planning meeting?",
                    gist="Priya chaired the Q3 planning meeting; Tom took the minutes and Alice "
                         "was absent.")
FEE = Expectation(facts=["15 euros"], question="What is the late payment fee?",
                  gist="The late payment fee is 15 euros; it was waived for customers on annual "
                       "plans during the migration.")
LEAVE = Expectation(facts=["25 days"],
                    question="How many days of paid annual leave do full-time employees get?",
                    gist="Full-time employees get 25 days of paid annual leave; part-time "
                         "employees get leave pro rata, and 5 days can be carried over.")
NOTICE = Expectation(facts=[["one month", "1 month"]],
                     question="How much notice must employees give before resigning?",
                     gist="Employees must give one month's notice; managers must give three "
                          "months' notice.")
OFFSITE = Expectation(facts=["Lisbon"], question="Where will the offsite be held?",
                      gist="The offsite will be held in Lisbon; Porto was the backup option.")
SETUP = Expectation(facts=["49 euros"], question="How much is the setup fee for new accounts?",
                    gist="New accounts pay a one-off setup fee of 49 euros, which is refunded if "
                         "they cancel within 30 days.")
RELEASE = Expectation(facts=["Lena"], question="Who will replace Sam as release manager?",
                      gist="Lena will replace Sam as release manager from June; Sam stays on as "
                           "QA lead.")
REFUND = Expectation(facts=["14 days"],
                     question="How long do refunds take after a return is received?",
                     gist="Refunds are issued within 14 days of receiving the return.")
METHODS = Expectation(facts=["card", "SEPA direct debit", "PayPal"],
                      question="Which payment methods are accepted?",
                      gist="Accepted payment methods: card, SEPA direct debit, PayPal. Cheques "
                           "are not accepted.")
DATABASES = Expectation(facts=["PostgreSQL", "14", "15", "16"],
                        question="Which database versions are supported?",
                        gist="Supported databases: PostgreSQL 14, 15 and 16. MySQL is not "
                             "supported.")
FEES = Expectation(facts=["10 euros", "25 euros"],
                   question="What are the cancellation fee and the reactivation fee?",
                   gist="The cancellation fee is 10 euros and the reactivation fee is 25 euros.")
ROADMAP = Expectation(facts=["Maria"], question="Who will present the Q4 roadmap at the all-hands?",
                      gist="Maria will present the Q4 roadmap at the all-hands; David will "
                           "present the hiring update.")
PRICE = Expectation(facts=["20 euros"], question="What is the monthly price of the Pro plan?",
                    gist="Pro costs 20 euros a month; Team costs 50 euros a month per workspace.")
REPORTS = Expectation(facts=["Samuel Reyes"], question="Who does the new data engineer report to?",
                      gist="The new data engineer reports to Samuel Reyes.")
SIGN_OFF = Expectation(facts=["HR"], question="Who signs off on parental leave requests?",
                       gist="Parental leave requests are signed off by HR; managers are informed "
                            "but do not sign off.")


@pytest.mark.parametrize(("expected", "answer", "why"), [
    # a name after a semicolon is a value of its own clause (`Tom`, `Porto`)
    (CHAIR, "Tom chaired the meeting; Priya took the minutes.", '"chaired" is said of value'),
    (CHAIR, "Priya took the minutes.", '"took" is said of fact 1'),
    (OFFSITE, "Porto; Lisbon was the backup option.", "value porto with no word"),
    (OFFSITE, "Lisbon is the backup option.", '"backup" is said of fact 1'),
    # a word of a gist clause that holds no value (`waived`, `part-time`, `informed`)
    (FEE, "The late payment fee of 15 euros was waived.", '"waived" is said of fact 1'),
    (FEE, "It is 15 euros for customers on annual plans.", "is said of fact 1"),
    (FEE, "The late payment fee was 15 euros during the migration.", "is said of fact 1"),
    (LEAVE, "Part-time staff get 25 days.", '"part" is said of fact 1'),
    (SIGN_OFF, "HR is informed.", '"informed" is said of fact 1'),
    (SIGN_OFF, "Requests are signed off by managers and HR.", '"managers" is said of fact 1'),
    # a sentence opener the rest of the gist never uses is a name (`MySQL`, `Cheques`)
    (DATABASES, "MySQL and PostgreSQL 14, 15 and 16 are supported.", "value mysql together"),
    (METHODS, "Card, SEPA direct debit, PayPal and cheques are accepted.", "cheque"),
    # a relative clause is a clause of its own (`, which is refunded if ...`)
    (SETUP, "The setup fee of 49 euros is refunded.", '"refunded" is said of fact 1'),
    # words before `and` that hold no value share the clause after it
    (NOTICE, "Managers and employees must give one month's notice.", '"managers" is said'),
    (NOTICE, "Both employees and managers give one month.", '"managers" is said'),
    # a clause opening with a pronoun says its words of the fact before it (`_referred`)
    (SETUP, "The setup fee is 49 euros. It is refunded.", '"refunded" is said of fact 1'),
    (SETUP, "49 euros, which is refunded.", '"refunded" is said of fact 1'),
    (FEE, "15 euros; it was waived.", '"waived" is said of fact 1'),
    (FEE, "The fee is 15 euros. This was waived.", '"waived" is said of fact 1'),
    (FEE, "15 euros. The fee was waived.", 'says "fee" and "waived" together'),  # `_mixed`
    (PRICE, "20 euros a month; per workspace.", '"workspace" is said of fact 1'),
    (ROADMAP, "Maria presents the roadmap; she also presents the hiring update.",
     '"hiring" is said of fact 1'),
    # two names in the other order, words between (`_reordered`)
    (RELEASE, "Sam will replace Lena as release manager from June.", "value sam before fact 1"),
    (RELEASE, "Sam replaces Lena as release manager.", "value sam before fact 1"),
    # a verb of the gist in the other voice, the name on the same side (`_voiced`)
    (RELEASE, "Lena will be replaced by Sam as release manager.", '"replaced" is in the other'),
    (CHAIR, "Priya was chaired.", '"chaired" is in the other voice'),
    # one name and a common noun of the gist swapped around its verb, same voice (`_crossed`)
    (REPORTS, "Samuel Reyes reports to the new data engineer.", 'other side of "reports"'),
    (REPORTS, "Samuel Reyes reported to the data engineer.", 'other side of "reported"'),
    (CHAIR, "Priya took the minutes of the Q3 planning meeting.", "said of fact 1"),
    # the phrase after a fact's link fronted as its subject (`_fronted`)
    (REFUND, "The return is received within 14 days of the refund.", '"return" is what fact 1'),
    (REFUND, "Returns are processed within 14 days.", '"returns" is what fact 1'),
    # a bare list item before a negated predicate (`_listed_denial`)
    (METHODS, "Card, SEPA direct debit. PayPal, cheques are not accepted.", "as a list item"),
    (METHODS, "Card, SEPA direct debit. PayPal, Amex are not accepted.", "as a list item"),
    # facts the gist states in clauses of their own, side by side in the other order
    (FEES, "25 euros and 10 euros.", "side by side in the other order"),
    (FEES, "25 euros, 10 euros.", "side by side in the other order"),
])
def test_a_fact_said_of_something_else_is_unsure(expected: Expectation, answer: str,
                                                 why: str) -> None:
    check = check_answer(answer, expected, similarity=0.9)
    assert (check.outcome, why in check.why) == ("unsure", True), check.why


@pytest.mark.parametrize(("expected", "answer"), [
    (CHAIR, "Priya chaired the Q3 planning meeting."),
    (CHAIR, "Priya chaired it; Tom took the minutes."),
    (CHAIR, "Priya chaired the meeting, and Tom took the minutes."),
    (FEE, "The late payment fee is 15 euros."),
    (LEAVE, "Full-time employees get 25 days of paid annual leave."),
    (NOTICE, "One month; managers give three months."),
    (OFFSITE, "In Lisbon."),
    (SETUP, "New accounts pay a setup fee of 49 euros."),
    (SETUP, "49 euros, which is refunded if they cancel within 30 days."),
    (RELEASE, "Lena will replace Sam as release manager."),
    (RELEASE, "From June, Lena will replace Sam."),
    (CHAIR, "The Q3 planning meeting was chaired by Priya."),  # voice and side both turned
    (REPORTS, "The new data engineer reports to Samuel Reyes."),
    (REPORTS, "To Samuel Reyes."),
    (REFUND, "Refunds are issued within 14 days of receiving the return."),
    (REFUND, "Within 14 days."),
    (METHODS, "Card, SEPA direct debit, PayPal. Cheques are not accepted."),
    (METHODS, "PayPal, card and SEPA direct debit."),  # a list in any order
    (FEES, "10 euros and 25 euros."),
    (SIGN_OFF, "HR signs off; managers are informed."),
    (DATABASES, "PostgreSQL 14, 15 and 16."),
    (PRICE, "Pro: 20 euros a month. Team: 50 euros."),
    (ROADMAP, "Maria will present the Q4 roadmap; David will present the hiring update."),
])
def test_the_plain_statements_beside_them_stay_right(expected: Expectation,
                                                      answer: str) -> None:
    check = check_answer(answer, expected, similarity=0.9)
    assert check.outcome == "right", check.why


FORBID = Expectation(facts=["HR"], forbid=["managers sign off"],
                     question="Who signs off on parental leave requests?",
                     gist="Parental leave requests are signed off by HR; managers are informed "
                          "but do not sign off.")


@pytest.mark.parametrize(("answer", "outcome"), [
    ("HR. Managers also sign off.", "wrong"),  # words between a forbidden statement's
    ("HR. Managers can sign off too.", "wrong"),
    ("HR; managers do not sign off.", "right"),  # a negation between still denies it
    ("HR; managers or staff sign off.", "unsure"),  # `or` between: a candidate, not a claim
])
def test_a_forbidden_statement_with_words_between_is_still_stated(answer: str,
                                                                   outcome: str) -> None:
    assert check_answer(answer, FORBID, similarity=0.9).outcome == outcome

