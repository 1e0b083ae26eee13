from omegaconf import OmegaConf

from rnn_trainer import PhonemeDecoderTrainer

args = OmegaConf.load("rnn_args.yaml")
trainer = PhonemeDecoderTrainer(args)
trainer.train()
